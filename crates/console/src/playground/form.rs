//! A tool's input JSON Schema as a form, drawn on the server: strings (a textarea when
//! long or multiline), numbers and integers (with their bounds), booleans, enums (a select
//! with the default chosen). A schema the form cannot draw faithfully (a property that is
//! an object or an array, a `oneOf`, a `$ref`, no type at all) gets no form: the
//! playground's raw JSON editor is then the way in, and the reason is shown. Half a form
//! that silently drops what it cannot draw would send wrong arguments.

use serde_json::{Map, Value};

/// Strings at least this long (by `maxLength`) get a textarea.
const LONG_TEXT: u64 = 200;

/// One input of the form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub(crate) name: String,
    /// `text`, `textarea`, `number`, `integer`, `boolean` or `enum`.
    pub(crate) kind: &'static str,
    pub(crate) required: bool,
    pub(crate) description: String,
    /// The value shown: the replayed argument, else the default (text; JSON for enums).
    pub(crate) value: String,
    /// A checkbox's state.
    pub(crate) checked: bool,
    pub(crate) min: String,
    pub(crate) max: String,
    pub(crate) step: String,
    pub(crate) min_length: String,
    pub(crate) max_length: String,
    pub(crate) options: Vec<Choice>,
}

/// One option of an enum's select; `value` is the option as JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    pub(crate) value: String,
    pub(crate) label: String,
    pub(crate) selected: bool,
}

/// What the playground shows for a schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Form {
    /// Every property drawn, required ones first.
    Fields(Vec<Field>),
    /// Raw JSON only, and why.
    Raw(String),
}

/// The form for `schema`, prefilled from `values` (a replayed call's arguments) and
/// otherwise from the schema's defaults.
pub(crate) fn form(schema: &Value, values: &Map<String, Value>) -> Form {
    for key in [
        "oneOf",
        "anyOf",
        "allOf",
        "$ref",
        "not",
        "if",
        "patternProperties",
    ] {
        if schema.get(key).is_some() {
            return Form::Raw(format!("the input schema uses `{key}`"));
        }
    }
    match schema.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Form::Raw(format!("the input schema's type is {other}, not an object"));
        }
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut fields = Vec::with_capacity(props.len());
    for (name, prop) in props {
        match field(
            name,
            prop,
            required.contains(&name.as_str()),
            values.get(name),
        ) {
            Ok(f) => fields.push(f),
            Err(why) => return Form::Raw(format!("the form cannot draw `{name}`: {why}")),
        }
    }
    fields.sort_by_key(|f| !f.required);
    Form::Fields(fields)
}

/// The type of a property: its `type`, or the one type beside `null` of a list.
fn type_of(prop: &Value) -> Option<&str> {
    match prop.get("type")? {
        Value::String(t) => Some(t),
        Value::Array(ts) => {
            let named: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (named.len() == 1).then(|| named[0])
        }
        _ => None,
    }
}

fn number_text(v: Option<&Value>) -> String {
    v.filter(|v| v.is_number())
        .map(Value::to_string)
        .unwrap_or_default()
}

fn field(name: &str, prop: &Value, required: bool, given: Option<&Value>) -> Result<Field, String> {
    if !prop.is_object() {
        return Err("its schema is not an object".into());
    }
    for key in ["oneOf", "anyOf", "allOf", "$ref", "const"] {
        if prop.get(key).is_some() {
            return Err(format!("it uses `{key}`"));
        }
    }
    let value = given.or_else(|| prop.get("default"));
    let mut f = Field {
        name: name.to_string(),
        kind: "text",
        required,
        description: prop
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        value: String::new(),
        checked: false,
        min: String::new(),
        max: String::new(),
        step: String::new(),
        min_length: String::new(),
        max_length: String::new(),
        options: Vec::new(),
    };
    if let Some(choices) = prop.get("enum") {
        let choices = choices.as_array().ok_or("its `enum` is not a list")?;
        if choices.is_empty() || choices.iter().any(|c| c.is_object() || c.is_array()) {
            return Err("its `enum` holds objects or lists".into());
        }
        f.kind = "enum";
        f.options = choices
            .iter()
            .map(|c| Choice {
                value: c.to_string(),
                label: c.as_str().map_or_else(|| c.to_string(), str::to_string),
                selected: value == Some(c),
            })
            .collect();
        return Ok(f);
    }
    let kind = type_of(prop).ok_or("it has no single type")?;
    match kind {
        "string" => {
            f.value = value.and_then(Value::as_str).unwrap_or("").to_string();
            let max = prop.get("maxLength").and_then(Value::as_u64);
            f.max_length = max.map(|m| m.to_string()).unwrap_or_default();
            f.min_length = number_text(prop.get("minLength"));
            let long = max.is_some_and(|m| m >= LONG_TEXT)
                || f.value.contains('\n')
                || prop.get("contentMediaType").is_some()
                || prop.get("format").and_then(Value::as_str) == Some("textarea");
            f.kind = if long { "textarea" } else { "text" };
        }
        "number" | "integer" => {
            f.kind = if kind == "integer" {
                "integer"
            } else {
                "number"
            };
            f.value = number_text(value);
            f.min = number_text(prop.get("minimum"));
            f.max = number_text(prop.get("maximum"));
            f.step = match prop.get("multipleOf") {
                Some(m) if m.is_number() => m.to_string(),
                _ if kind == "integer" => "1".into(),
                _ => "any".into(),
            };
        }
        "boolean" => {
            f.kind = "boolean";
            f.checked = value.and_then(Value::as_bool).unwrap_or(false);
        }
        other => return Err(format!("it is {} {other}", article(other))),
    }
    Ok(f)
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// The arguments the raw editor starts with: the replayed ones, else every default.
pub(crate) fn initial_arguments(schema: &Value, values: &Map<String, Value>) -> Map<String, Value> {
    if !values.is_empty() {
        return values.clone();
    }
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter_map(|(k, p)| Some((k.clone(), p.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn fields(schema: Value, values: Value) -> Vec<Field> {
        match form(&schema, values.as_object().unwrap()) {
            Form::Fields(f) => f,
            Form::Raw(why) => panic!("no form: {why}"),
        }
    }

    fn raw(schema: Value) -> String {
        match form(&schema, &Map::new()) {
            Form::Raw(why) => why,
            Form::Fields(f) => panic!("a form: {f:?}"),
        }
    }

    #[test]
    fn scalars_get_a_form_with_defaults_bounds_and_required_first() {
        let f = fields(
            json!({"type": "object", "required": ["steps"], "properties": {
                "delay_ms": {"type": "number", "default": 50, "minimum": 0, "maximum": 1000},
                "loud": {"type": "boolean", "default": true},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "slow"},
                "note": {"type": "string", "maxLength": 2000},
                "steps": {"type": "integer", "description": "How many"},
                "who": {"type": ["string", "null"]}}}),
            json!({}),
        );
        assert_eq!(f[0].name, "steps");
        assert_eq!(
            (f[0].kind, f[0].required, f[0].step.as_str()),
            ("integer", true, "1")
        );
        assert_eq!(f[0].description, "How many");
        let by = |n: &str| f.iter().find(|x| x.name == n).unwrap().clone();
        let delay = by("delay_ms");
        assert_eq!(
            (
                delay.kind,
                delay.value.as_str(),
                delay.min.as_str(),
                delay.max.as_str(),
                delay.step.as_str()
            ),
            ("number", "50", "0", "1000", "any")
        );
        assert!(by("loud").checked);
        let mode = by("mode");
        assert_eq!(mode.kind, "enum");
        assert_eq!(
            mode.options
                .iter()
                .map(|o| (o.value.as_str(), o.selected))
                .collect::<Vec<_>>(),
            [("\"fast\"", false), ("\"slow\"", true)]
        );
        assert_eq!(by("note").kind, "textarea");
        assert_eq!(by("who").kind, "text");
    }

    #[test]
    fn replayed_values_win_over_defaults() {
        let f = fields(
            json!({"properties": {"n": {"type": "number", "default": 1},
                "s": {"type": "string"}, "b": {"type": "boolean", "default": true},
                "e": {"enum": [1, 2, 3], "default": 1}}}),
            json!({"n": 7, "s": "two\nlines", "b": false, "e": 3}),
        );
        let by = |n: &str| f.iter().find(|x| x.name == n).unwrap().clone();
        assert_eq!(by("n").value, "7");
        assert_eq!(by("s").kind, "textarea");
        assert!(!by("b").checked);
        assert!(by("e").options[2].selected && !by("e").options[0].selected);
    }

    #[test]
    fn what_the_form_cannot_draw_falls_back_to_raw_json() {
        assert!(
            raw(json!({"type": "object", "properties": {"tags": {"type": "array"}}}))
                .contains("`tags`")
        );
        assert!(raw(json!({"properties": {"opts": {"type": "object"}}})).contains("an object"));
        assert!(
            raw(json!({"properties": {"x": {"oneOf": [{"type": "string"}, {"type": "number"}]}}}))
                .contains("oneOf")
        );
        assert!(raw(json!({"properties": {"x": {}}})).contains("no single type"));
        assert!(
            raw(json!({"properties": {"x": {"type": ["string", "number"]}}}))
                .contains("no single type")
        );
        assert!(raw(json!({"anyOf": [{"type": "object"}]})).contains("anyOf"));
        assert!(raw(json!({"type": "array"})).contains("not an object"));
        assert!(raw(json!({"properties": {"x": {"enum": [{"a": 1}]}}})).contains("enum"));
        // No properties at all: a form with nothing to fill in.
        assert_eq!(
            form(&json!({"type": "object"}), &Map::new()),
            Form::Fields(Vec::new())
        );
    }

    #[test]
    fn the_raw_editor_starts_from_the_replay_or_the_defaults() {
        let schema =
            json!({"properties": {"a": {"type": "number", "default": 2}, "b": {"type": "string"}}});
        assert_eq!(
            Value::Object(initial_arguments(&schema, &Map::new())),
            json!({"a": 2})
        );
        let replay = json!({"b": "x"});
        assert_eq!(
            Value::Object(initial_arguments(&schema, replay.as_object().unwrap())),
            replay
        );
    }
}
