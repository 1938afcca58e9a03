//! Call arguments: defaults, coercion and validation against a tool's input JSON Schema.
//!
//! A model's arguments go through [`ArgsValidator::prepare`] before a tool runs, in this
//! order:
//!
//! 1. `null` becomes `{}`; a JSON string holding an object is read as that object; any other
//!    non-object is rejected.
//! 2. Optional parameters given as `null` are dropped (models send `null` for "not given").
//! 3. Absent parameters with a schema `default` get it.
//! 4. Scalars of the wrong type are coerced when that is unambiguous: `"5"` → `5`,
//!    `"true"` → `true`, `1` → `true`, `5` → `"5"` (for an enum, only to an allowed value).
//!    Objects and arrays are never coerced.
//! 5. The result is validated with the compiled schema (the `jsonschema` crate); every
//!    problem is reported, by parameter, in words a model can act on.
//!
//! Messages never echo the value of a parameter marked sensitive, and cut long values to
//! [`MAX_VALUE_CHARS`] characters.

use std::collections::HashSet;
use std::fmt;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};
use serde_json::{Map, Number, Value};

/// Values (and names taken from the input) longer than this are cut, ending in `…`.
const MAX_VALUE_CHARS: usize = 80;

/// Prepares arguments for a call: fills defaults, coerces, validates.
///
/// Build one per tool version ([`ArgsValidator::new`] compiles the schema) and share it;
/// [`ArgsValidator::prepare`] takes `&self`.
#[derive(Debug, Clone)]
pub struct ArgsValidator {
    validator: Validator,
    /// The schema's `properties`, in schema order.
    properties: Vec<Property>,
    required: HashSet<String>,
    sensitive: HashSet<String>,
}

/// What coercion and messages need to know about one property.
#[derive(Debug, Clone)]
struct Property {
    name: String,
    /// The property's `type`s, in schema order (empty when it has none we know).
    types: Vec<Kind>,
    /// The property's `enum`, if any.
    allowed: Option<Vec<Value>>,
    default: Option<Value>,
}

/// A JSON Schema `type` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        })
    }

    fn matches(self, value: &Value) -> bool {
        match self {
            Kind::Null => value.is_null(),
            Kind::Boolean => value.is_boolean(),
            Kind::Integer => match value {
                Value::Number(n) => {
                    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
                }
                _ => false,
            },
            Kind::Number => value.is_number(),
            Kind::String => value.is_string(),
            Kind::Array => value.is_array(),
            Kind::Object => value.is_object(),
        }
    }

    /// `value` converted to this type, when the conversion is one models need.
    fn coerce(self, value: &Value) -> Option<Value> {
        match (self, value) {
            (Kind::Number, Value::String(s)) => parse_number(s.trim()).map(Value::Number),
            (Kind::Integer, Value::String(s)) => parse_integer(s.trim()).map(Value::Number),
            (Kind::Boolean, Value::String(s)) => {
                let s = s.trim();
                if s.eq_ignore_ascii_case("true") {
                    Some(Value::Bool(true))
                } else if s.eq_ignore_ascii_case("false") {
                    Some(Value::Bool(false))
                } else {
                    None
                }
            }
            (Kind::Boolean, Value::Number(n)) => match n.as_f64() {
                Some(1.0) => Some(Value::Bool(true)),
                Some(0.0) => Some(Value::Bool(false)),
                _ => None,
            },
            (Kind::String, Value::Number(n)) => Some(Value::String(n.to_string())),
            (Kind::String, Value::Bool(b)) => Some(Value::String(b.to_string())),
            _ => None,
        }
    }
}

impl Property {
    fn from_schema(name: &str, schema: &Value) -> Property {
        let types = match schema.get("type") {
            Some(Value::String(t)) => Kind::parse(t).into_iter().collect(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .filter_map(Kind::parse)
                .collect(),
            _ => Vec::new(),
        };
        Property {
            name: name.to_string(),
            types,
            allowed: schema.get("enum").and_then(Value::as_array).cloned(),
            default: schema.get("default").cloned(),
        }
    }

    /// The value to use instead of `value`, if it has none of the property's types and
    /// converts to one of them (and to an allowed value, for an enum).
    fn coerce(&self, value: &Value) -> Option<Value> {
        if value.is_object() || value.is_array() {
            return None;
        }
        if self.types.iter().any(|k| k.matches(value)) {
            return None;
        }
        self.types.iter().filter_map(|k| k.coerce(value)).find(|v| {
            self.allowed
                .as_ref()
                .is_none_or(|allowed| allowed.contains(v))
        })
    }
}

/// A finite number, kept an integer when the text is one (`"5"` → `5`, `"2.5"` → `2.5`,
/// `"1e3"` → `1000.0`).
fn parse_number(s: &str) -> Option<Number> {
    if let Some(n) = parse_integer(s) {
        return Some(n);
    }
    // Rust also reads "inf" and "NaN": JSON has no such numbers.
    s.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(Number::from_f64)
}

fn parse_integer(s: &str) -> Option<Number> {
    if let Ok(i) = s.parse::<i64>() {
        Some(Number::from(i))
    } else {
        s.parse::<u64>().ok().map(Number::from)
    }
}

/// Why a call's arguments were rejected: every problem found, sorted by parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsError {
    /// The problems, sorted by parameter.
    pub problems: Vec<Problem>,
}

/// One problem with a call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The parameter concerned (the first segment of the instance path), if any.
    pub parameter: Option<String>,
    /// What is wrong, in words for the model (never echoing a sensitive value).
    pub message: String,
}

impl Problem {
    fn new(parameter: Option<String>, message: impl Into<String>) -> Problem {
        Problem {
            parameter,
            message: message.into(),
        }
    }

    /// Whether the message already names its parameter (so it needs no "`name`: " prefix).
    fn names_itself(&self, name: &str) -> bool {
        let name = name_text(name);
        ["missing required parameter `", "unknown parameter `"]
            .iter()
            .any(|lead| {
                self.message
                    .strip_prefix(lead)
                    .and_then(|rest| rest.strip_prefix(name.as_str()))
                    .is_some_and(|rest| rest.starts_with('`'))
            })
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.parameter {
            Some(p) if !self.names_itself(p) => write!(f, "`{}`: {}", name_text(p), self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl fmt::Display for ArgsError {
    /// `invalid arguments: ` and the problems, separated by `; `, on one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid arguments")?;
        for (i, problem) in self.problems.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { "; " })?;
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ArgsError {}

/// A tool's input schema that is not a valid JSON Schema, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// Where in the schema (a JSON pointer; empty for the whole schema).
    pub at: String,
    /// What is wrong there.
    pub message: String,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at.as_str() {
            "" => write!(f, "invalid input schema: {}", self.message),
            at => write!(f, "invalid input schema at `{at}`: {}", self.message),
        }
    }
}

impl std::error::Error for SchemaError {}

impl ArgsValidator {
    /// Compiles `schema` (a tool's input schema). Fails when it is not a valid JSON Schema.
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        let validator = jsonschema::validator_for(schema).map_err(|e| SchemaError {
            at: e.instance_path().to_string(),
            message: e.to_string(),
        })?;
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(name, s)| Property::from_schema(name, s))
                    .collect()
            })
            .unwrap_or_default();
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Ok(ArgsValidator {
            validator,
            properties,
            required,
            sensitive: HashSet::new(),
        })
    }

    /// Marks parameters whose values must never appear in messages (the tool's `sensitive`
    /// inputs). Adds to any already marked.
    #[must_use]
    pub fn with_sensitive(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.sensitive.extend(names);
        self
    }

    /// Returns the arguments to pass to the tool, or every problem found.
    pub fn prepare(&self, args: Value) -> Result<Value, ArgsError> {
        let mut args = match args {
            Value::Null => Map::new(),
            Value::Object(map) => map,
            Value::String(text) => match serde_json::from_str(&text) {
                Ok(Value::Object(map)) => map,
                _ => return Err(not_an_object()),
            },
            _ => return Err(not_an_object()),
        };

        args.retain(|name, value| !value.is_null() || self.required.contains(name));

        for prop in &self.properties {
            if let Some(value) = args.get_mut(&prop.name) {
                if let Some(coerced) = prop.coerce(value) {
                    *value = coerced;
                }
            } else if let Some(default) = &prop.default {
                // Defaults go through coercion too: a TOOL.md default may be a string.
                let value = prop.coerce(default).unwrap_or_else(|| default.clone());
                args.insert(prop.name.clone(), value);
            }
        }

        let args = Value::Object(args);
        if self.validator.is_valid(&args) {
            return Ok(args);
        }
        let mut problems: Vec<Problem> = self
            .validator
            .iter_errors(&args)
            .flat_map(|error| self.problems(&error))
            .collect();
        if problems.is_empty() {
            problems.push(Problem::new(
                None,
                "the arguments do not match the tool's input schema",
            ));
        }
        problems.sort_by(|a, b| (&a.parameter, &a.message).cmp(&(&b.parameter, &b.message)));
        problems.dedup();
        Err(ArgsError { problems })
    }

    /// The problems one validation error stands for (several for unknown parameters).
    fn problems(&self, error: &ValidationError<'_>) -> Vec<Problem> {
        let mut segments = error.instance_path().segments();
        let parameter = segments.next().map(|s| s.to_string());
        let inner: Vec<String> = segments.map(|s| s.to_string()).collect();
        let sensitive = match &parameter {
            Some(p) => self.sensitive.contains(p),
            // The whole arguments object holds every sensitive value.
            None => !self.sensitive.is_empty(),
        };
        // Where inside the parameter the problem is, for nested values.
        let at = |message: String| {
            if inner.is_empty() {
                message
            } else {
                format!("at `/{}`: {message}", name_text(&inner.join("/")))
            }
        };

        match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_string);
                match parameter {
                    None => vec![Problem::new(
                        Some(name.clone()),
                        format!("missing required parameter `{}`", name_text(&name)),
                    )],
                    Some(_) => vec![Problem::new(
                        parameter,
                        at(format!("missing required property `{}`", name_text(&name))),
                    )],
                }
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => match parameter {
                None => unexpected
                    .iter()
                    .map(|name| Problem::new(Some(name.clone()), self.unknown_parameter(name)))
                    .collect(),
                Some(_) => unexpected
                    .iter()
                    .map(|name| {
                        Problem::new(
                            parameter.clone(),
                            at(format!("unknown property `{}`", name_text(name))),
                        )
                    })
                    .collect(),
            },
            ValidationErrorKind::Type { kind } => {
                let expected = match kind {
                    TypeKind::Single(ty) => type_text(*ty),
                    TypeKind::Multiple(set) => {
                        one_of_words(set.iter().map(type_text).collect::<Vec<_>>())
                    }
                };
                let instance = error.instance();
                let got = if sensitive {
                    value_kind(instance).to_string()
                } else {
                    value_text(instance)
                };
                vec![Problem::new(
                    parameter,
                    at(format!("expected {expected}, got {got}")),
                )]
            }
            ValidationErrorKind::Enum { options } => {
                let allowed = match options.as_ref() {
                    Value::Array(options) => options
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    other => other.to_string(),
                };
                let message = if sensitive {
                    format!("must be one of {allowed}")
                } else {
                    format!(
                        "must be one of {allowed}, got {}",
                        value_text(error.instance())
                    )
                };
                vec![Problem::new(parameter, at(message))]
            }
            _ => {
                let placeholder = if sensitive {
                    "the value".to_string()
                } else {
                    value_text(error.instance())
                };
                let message = error.masked_with(placeholder).to_string();
                vec![Problem::new(parameter, at(message))]
            }
        }
    }

    fn unknown_parameter(&self, name: &str) -> String {
        let name = name_text(name);
        if self.properties.is_empty() {
            return format!("unknown parameter `{name}`; this tool takes no parameters");
        }
        let known: Vec<&str> = self.properties.iter().map(|p| p.name.as_str()).collect();
        format!(
            "unknown parameter `{name}`; known parameters: {}",
            known.join(", ")
        )
    }
}

fn not_an_object() -> ArgsError {
    ArgsError {
        problems: vec![Problem::new(None, "arguments must be a JSON object")],
    }
}

/// `s`, cut to [`MAX_VALUE_CHARS`] characters (the last being `…`) when longer.
fn cut(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(MAX_VALUE_CHARS) {
        None => s.into(),
        Some(_) => {
            let end = s
                .char_indices()
                .nth(MAX_VALUE_CHARS - 1)
                .map_or(s.len(), |(i, _)| i);
            format!("{}…", &s[..end]).into()
        }
    }
}

/// A value as a model would write it, cut when long: `"lots"`, `5`, `true`, `{"a":1}`.
fn value_text(value: &Value) -> String {
    match value {
        // Cut the text, not its quoted form, so the result is still a quoted string.
        Value::String(s) => Value::String(cut(s).into_owned()).to_string(),
        other => cut(&other.to_string()).into_owned(),
    }
}

/// A parameter name from the input, fit for one line between backticks.
fn name_text(name: &str) -> String {
    cut(name)
        .chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// What kind of value this is, without saying what it is: `a number`.
fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn type_text(ty: JsonType) -> String {
    match ty.as_str() {
        "null" => "null".to_string(),
        name @ ("integer" | "array" | "object") => format!("an {name}"),
        name => format!("a {name}"),
    }
}

/// `a`, `a or b`, `a, b or c`.
fn one_of_words(words: Vec<String>) -> String {
    match words.split_last() {
        None => "a value of no type".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_short_text_and_cuts_long_text_to_80_chars() {
        assert_eq!(cut("short"), "short");
        let exact = "é".repeat(80);
        assert_eq!(cut(&exact), exact);
        let long = "é".repeat(81);
        let cut_text = cut(&long);
        assert_eq!(cut_text.chars().count(), 80);
        assert!(cut_text.ends_with("é…"));
    }

    #[test]
    fn parse_number_keeps_integers_and_rejects_non_finite() {
        let cases: &[(&str, Option<Value>)] = &[
            ("5", Some(serde_json::json!(5))),
            ("-2.5", Some(serde_json::json!(-2.5))),
            ("1e3", Some(serde_json::json!(1000.0))),
            ("18446744073709551615", Some(serde_json::json!(u64::MAX))),
            ("inf", None),
            ("NaN", None),
            ("", None),
            ("five", None),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse_number(text).map(Value::Number),
                *want,
                "parse_number({text:?})"
            );
        }
        assert!(parse_number("5").is_some_and(|n| n.is_i64()));
    }

    #[test]
    fn one_of_words_joins_like_prose() {
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(one_of_words(w(&["a string"])), "a string");
        assert_eq!(one_of_words(w(&["a string", "null"])), "a string or null");
        assert_eq!(
            one_of_words(w(&["a boolean", "a number", "a string"])),
            "a boolean, a number or a string"
        );
    }

    #[test]
    fn name_text_escapes_control_characters() {
        assert_eq!(name_text("a\nb"), "a\\nb");
    }

    #[test]
    fn validator_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<ArgsValidator>();
    }
}
