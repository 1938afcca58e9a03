//! TOOL.md → [`ToolManifest`] plus diagnostics.
//!
//! The rules are those of the Officer tool format (seed document 001). Anything that keeps
//! a tool from working is an error; anything that works but is probably a mistake is a
//! warning. Nothing here panics, whatever the bytes.

use std::path::Path;

use saphyr::Scalar;
use serde_json::{Map, Number, Value};

use crate::diagnostic::{Code, Diagnostic, LineIndex, Position};
use crate::frontmatter::{self, SplitError};
use crate::manifest::{Input, InputType, Language, ToolManifest};
use crate::names;
use crate::yaml::{self, Data, MAX_DEPTH, Node};

/// The outcome of parsing one TOOL.md.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// Present exactly when there is no error among `diagnostics`.
    pub manifest: Option<ToolManifest>,
    /// Every finding, errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
}

/// The seed's keys, then Toolhost's extensions.
const TOP_LEVEL_KEYS: &[&str] = &[
    "name",
    "label",
    "description",
    "version",
    "language",
    "inputs",
    "timeout",
    "idle_timeout",
    "network",
    "programs",
];
const INPUT_KEYS: &[&str] = &[
    "type",
    "description",
    "optional",
    "sensitive",
    "values",
    "default",
];

/// Parses the bytes of a TOOL.md file; `path` is only used in diagnostics.
pub fn parse_tool_md(path: &Path, bytes: &[u8]) -> Parsed {
    let mut cx = Cx {
        path,
        diagnostics: Vec::new(),
        yaml_line: 1,
    };
    let manifest = cx.parse(bytes);
    let has_error = cx.diagnostics.iter().any(Diagnostic::is_error);
    Parsed {
        manifest: if has_error { None } else { manifest },
        diagnostics: cx.diagnostics,
    }
}

struct Cx<'p> {
    path: &'p Path,
    diagnostics: Vec<Diagnostic>,
    /// File line on which the YAML text starts (YAML markers are relative to it).
    yaml_line: usize,
}

impl Cx<'_> {
    fn error(&mut self, at: Position, code: Code, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::error(self.path, Some(at), code, message));
    }

    fn warn(&mut self, at: Position, code: Code, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::warning(self.path, Some(at), code, message));
    }

    fn pos(&self, node: &Node<'_>) -> Position {
        let m = node.start;
        Position::new(self.yaml_line + m.line().saturating_sub(1), m.col() + 1)
    }

    fn parse(&mut self, bytes: &[u8]) -> Option<ToolManifest> {
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let valid = String::from_utf8_lossy(&bytes[..e.valid_up_to()]);
                let at = LineIndex::new(&valid).position(valid.len());
                self.error(at, Code::NotUtf8, "TOOL.md is not valid UTF-8");
                return None;
            }
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let split = match frontmatter::split(text) {
            Ok(split) => split,
            Err(SplitError::Missing) => {
                self.error(
                    Position::START,
                    Code::FrontmatterMissing,
                    "TOOL.md must start with a `---` line opening the YAML frontmatter",
                );
                return None;
            }
            Err(SplitError::Unclosed) => {
                self.error(
                    Position::START,
                    Code::FrontmatterUnclosed,
                    "the frontmatter has no closing `---` line",
                );
                return None;
            }
        };
        self.yaml_line = split.yaml_line;
        let doc = match yaml::load(split.yaml) {
            Ok(doc) => doc,
            Err(e) => {
                let at = Position::new(
                    self.yaml_line + e.at.line().saturating_sub(1),
                    e.at.col() + 1,
                );
                self.error(at, Code::YamlSyntax, format!("invalid YAML: {}", e.message));
                return None;
            }
        };
        let manifest = match &doc {
            None => self.fields(None),
            Some(doc) => match &doc.data {
                Data::Map(pairs) => self.fields(Some(pairs)),
                Data::Scalar(Scalar::Null) => self.fields(None),
                _ => {
                    let at = self.pos(doc);
                    self.error(
                        at,
                        Code::FrontmatterNotMapping,
                        "the frontmatter must be a mapping of `key: value` lines",
                    );
                    None
                }
            },
        };
        if split.body.trim().is_empty() {
            self.warn(
                Position::new(split.body_line, 1),
                Code::BodyEmpty,
                "the Markdown body is empty: the agent reads it to learn how to use the tool",
            );
        }
        manifest.map(|mut m| {
            m.body = split.body.to_string();
            m
        })
    }

    fn fields(&mut self, map: Option<&[(Node<'_>, Node<'_>)]>) -> Option<ToolManifest> {
        let mut name = None;
        let mut label = None;
        let mut description = None;
        let mut version = None;
        let mut language = Language::default();
        let mut inputs = Vec::new();
        let mut timeout = None;
        let mut idle_timeout = None;
        let mut network = false;
        let mut programs = Vec::new();
        let mut extra = Map::new();
        let mut seen = Vec::new();

        for (key, value) in map.into_iter().flatten() {
            let Some(k) = key.as_str() else {
                let at = self.pos(key);
                self.warn(
                    at,
                    Code::FieldUnknown,
                    "ignoring a frontmatter key that is not a string",
                );
                continue;
            };
            seen.push(k.to_string());
            match k {
                "name" => name = self.name(value),
                "label" => label = self.string_field("label", value),
                "description" => description = self.description(value),
                "version" => version = self.version(value),
                "language" => language = self.language(value).unwrap_or(language),
                "inputs" => inputs = self.inputs(value),
                "timeout" => timeout = self.seconds(k, value),
                "idle_timeout" => idle_timeout = self.seconds(k, value),
                "network" => network = self.top_flag(k, value).unwrap_or(false),
                "programs" => programs = self.programs(value),
                _ => {
                    let at = self.pos(key);
                    self.warn(
                        at,
                        Code::FieldUnknown,
                        format!(
                            "unknown frontmatter key `{k}` (kept, but unused); known keys: {}",
                            TOP_LEVEL_KEYS.join(", ")
                        ),
                    );
                    let v = self.json_of(value, 0);
                    extra.insert(k.to_string(), v);
                }
            }
        }

        let seen = |k: &str| seen.iter().any(|s| s == k);
        if !seen("name") {
            self.error(
                Position::START,
                Code::NameMissing,
                "missing required field `name`",
            );
        }
        if !seen("description") {
            self.error(
                Position::START,
                Code::DescriptionMissing,
                "missing required field `description`",
            );
        }
        let version_declared = version.is_some();
        if version.is_none() && !self.has(Code::VersionInvalid) {
            self.warn(
                Position::START,
                Code::VersionMissing,
                "no `version`: it defaults to 0, and sync cannot tell when this tool changes; add `version: 1`",
            );
        }
        let name: String = name?;
        Some(ToolManifest {
            label: label.unwrap_or_else(|| name.clone()),
            name,
            description: description?,
            version: version.unwrap_or(0),
            version_declared,
            language,
            inputs,
            timeout,
            idle_timeout,
            network,
            programs,
            extra,
            body: String::new(),
        })
    }

    fn has(&self, code: Code) -> bool {
        self.diagnostics.iter().any(|d| d.code == code)
    }

    fn string_field(&mut self, field: &str, node: &Node<'_>) -> Option<String> {
        match &node.data {
            Data::Scalar(Scalar::String(s)) => Some(s.to_string()),
            Data::Scalar(Scalar::Null) if field == "label" => None,
            _ => {
                let at = self.pos(node);
                self.error(
                    at,
                    Code::FieldType,
                    format!(
                        "`{field}` must be a string (quote it if YAML reads it as something else)"
                    ),
                );
                None
            }
        }
    }

    fn name(&mut self, node: &Node<'_>) -> Option<String> {
        let name = self.string_field("name", node)?;
        let at = self.pos(node);
        if !names::is_valid_tool_name(&name) {
            self.error(
                at,
                Code::NameInvalid,
                format!(
                    "tool name `{name}` must be 1 to 64 characters of letters, digits, `_` or `-`"
                ),
            );
            return None;
        }
        if !names::is_snake_case(&name) {
            self.warn(
                at,
                Code::NameNotSnakeCase,
                format!(
                    "tool name `{name}` is not snake_case (suggested: `{}`)",
                    names::to_snake_case(&name)
                ),
            );
        }
        Some(name)
    }

    fn description(&mut self, node: &Node<'_>) -> Option<String> {
        let d = self.string_field("description", node)?;
        if d.trim().is_empty() {
            let at = self.pos(node);
            self.error(
                at,
                Code::DescriptionMissing,
                "`description` is empty: the agent decides when to call the tool from it",
            );
            return None;
        }
        Some(d)
    }

    fn version(&mut self, node: &Node<'_>) -> Option<u64> {
        let at = self.pos(node);
        match &node.data {
            Data::Scalar(Scalar::Integer(n)) if *n >= 0 => u64::try_from(*n).ok(),
            Data::Scalar(Scalar::String(s)) if s.trim().parse::<u64>().is_ok() => {
                self.warn(
                    at,
                    Code::FieldType,
                    "`version` should be an integer, not a string",
                );
                s.trim().parse().ok()
            }
            Data::Scalar(Scalar::Null) => None,
            _ => {
                self.error(
                    at,
                    Code::VersionInvalid,
                    "`version` must be a non-negative integer, such as `version: 1`",
                );
                None
            }
        }
    }

    fn top_flag(&mut self, field: &str, node: &Node<'_>) -> Option<bool> {
        match &node.data {
            Data::Scalar(Scalar::Boolean(b)) => Some(*b),
            _ => {
                let at = self.pos(node);
                self.error(
                    at,
                    Code::FieldType,
                    format!("`{field}` must be true or false, such as `{field}: true`"),
                );
                None
            }
        }
    }

    /// `programs`: the host programs the tool runs, as a list or a comma-separated string
    /// of plain names (looked up on the tools' `PATH`).
    fn programs(&mut self, node: &Node<'_>) -> Vec<String> {
        let items: Vec<(String, Position)> = match &node.data {
            Data::Seq(items) => items
                .iter()
                .map(|i| (scalar_text(i).unwrap_or_default(), self.pos(i)))
                .collect(),
            Data::Scalar(Scalar::Null) => Vec::new(),
            _ => match scalar_text(node) {
                Some(s) => s
                    .split(',')
                    .map(|p| (p.trim().to_string(), self.pos(node)))
                    .collect(),
                None => Vec::new(),
            },
        };
        let mut out: Vec<String> = Vec::new();
        for (name, at) in items {
            let plain = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'));
            if !plain {
                self.error(
                    at,
                    Code::FieldType,
                    format!(
                        "`programs` lists the programs the tool runs by their plain names, such as                          `programs: [ffmpeg, ffprobe]`; `{name}` is not one"
                    ),
                );
            } else if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    fn seconds(&mut self, field: &str, node: &Node<'_>) -> Option<std::time::Duration> {
        let secs = match &node.data {
            Data::Scalar(Scalar::Integer(n)) => Some(*n as f64),
            Data::Scalar(Scalar::FloatingPoint(f)) => Some(f.into_inner()),
            _ => None,
        };
        match secs.and_then(|s| {
            (s > 0.0)
                .then(|| std::time::Duration::try_from_secs_f64(s).ok())
                .flatten()
        }) {
            Some(d) => Some(d),
            None => {
                let at = self.pos(node);
                self.error(
                    at,
                    Code::FieldType,
                    format!(
                        "`{field}` must be a positive number of seconds, such as `{field}: 120`"
                    ),
                );
                None
            }
        }
    }

    fn language(&mut self, node: &Node<'_>) -> Option<Language> {
        let s = self.string_field("language", node)?;
        if let Some(lang) = Language::parse(&s.trim().to_ascii_lowercase()) {
            return Some(lang);
        }
        let at = self.pos(node);
        let hint = if s.eq_ignore_ascii_case("javascript") || s.eq_ignore_ascii_case("js") {
            " (JavaScript tools use `typescript` with an `index.js` entry)"
        } else {
            ""
        };
        self.error(
            at,
            Code::LanguageUnknown,
            format!("unknown language `{s}`: expected typescript, python or bash{hint}"),
        );
        None
    }

    fn inputs(&mut self, node: &Node<'_>) -> Vec<Input> {
        let map = match &node.data {
            Data::Map(map) => map,
            Data::Scalar(Scalar::Null) => return Vec::new(),
            _ => {
                let at = self.pos(node);
                self.error(
                    at,
                    Code::FieldType,
                    "`inputs` must be a mapping from parameter name to its definition",
                );
                return Vec::new();
            }
        };
        let mut inputs = Vec::new();
        for (key, value) in map {
            let at = self.pos(key);
            let Some(name) = key.as_str() else {
                self.error(at, Code::InputNameInvalid, "input names must be strings");
                continue;
            };
            if !names::is_valid_input_name(name) {
                self.warn(
                    at,
                    Code::InputNameInvalid,
                    format!("input name `{name}` should be 1 to 64 letters, digits, `_`, `.` or `-`: some model providers reject other names"),
                );
            }
            if let Some(input) = self.input(name, at, value) {
                inputs.push(input);
            }
        }
        inputs
    }

    fn input(&mut self, name: &str, key_at: Position, node: &Node<'_>) -> Option<Input> {
        let Data::Map(map) = &node.data else {
            let at = self.pos(node);
            self.error(
                at,
                Code::InputInvalid,
                format!("input `{name}` must be a mapping with at least `type` and `description`"),
            );
            return None;
        };
        let mut ty = None;
        let mut description = None;
        let mut optional = false;
        let mut sensitive = false;
        let mut values: Option<(Vec<String>, Position)> = None;
        let mut default = None;
        let mut ok = true;

        for (key, value) in map {
            let Some(k) = key.as_str() else {
                let at = self.pos(key);
                self.warn(
                    at,
                    Code::FieldUnknown,
                    format!("ignoring a key of input `{name}` that is not a string"),
                );
                continue;
            };
            match k {
                "type" => ty = self.input_type(name, value),
                "description" => description = self.string_field("description", value),
                "optional" => {
                    optional = self.flag(name, k, value).unwrap_or_else(|| {
                        ok = false;
                        false
                    })
                }
                "sensitive" => {
                    sensitive = self.flag(name, k, value).unwrap_or_else(|| {
                        ok = false;
                        false
                    })
                }
                "values" => values = self.values(name, value).map(|v| (v, self.pos(value))),
                "default" => {
                    if !value.is_null() {
                        default = Some((self.json_of(value, 0), self.pos(value)));
                    }
                }
                _ => {
                    let at = self.pos(key);
                    self.warn(
                        at,
                        Code::FieldUnknown,
                        format!(
                            "unknown key `{k}` in input `{name}` (ignored); known keys: {}",
                            INPUT_KEYS.join(", ")
                        ),
                    );
                }
            }
        }

        let at = key_at;
        let ty = ty.unwrap_or_else(|| {
            if !map.iter().any(|(k, _)| k.as_str() == Some("type")) {
                self.warn(
                    at,
                    Code::InputTypeMissing,
                    format!("input `{name}` has no `type`; treating it as a string"),
                );
            }
            InputType::String
        });
        let description = description.unwrap_or_else(|| {
            self.warn(
                at,
                Code::InputDescriptionMissing,
                format!(
                    "input `{name}` has no `description`: the agent will not know what to pass"
                ),
            );
            String::new()
        });
        let values = match (ty, values) {
            (InputType::Enum, Some((v, _))) if !v.is_empty() => v,
            (InputType::Enum, other) => {
                let at = other.map_or(at, |(_, p)| p);
                self.error(
                    at,
                    Code::EnumValuesMissing,
                    format!(
                        "enum input `{name}` needs `values`, as a comma-separated string or a list"
                    ),
                );
                return None;
            }
            (_, Some((_, p))) => {
                self.warn(
                    p,
                    Code::ValuesIgnored,
                    format!("`values` is ignored: input `{name}` is not an enum"),
                );
                Vec::new()
            }
            (_, None) => Vec::new(),
        };
        let default = match default {
            Some((v, p)) => Some(self.check_default(name, ty, &values, v, p)?),
            None => None,
        };
        if default.is_some() && !optional {
            self.warn(
                at,
                Code::DefaultOnRequired,
                format!("input `{name}` has a default but is required, so the model must still send it; add `optional: true`"),
            );
        }
        ok.then(|| Input {
            name: name.to_string(),
            ty,
            description,
            optional,
            sensitive,
            values,
            default,
        })
    }

    fn input_type(&mut self, name: &str, node: &Node<'_>) -> Option<InputType> {
        let at = self.pos(node);
        let Some(s) = node.as_str() else {
            self.warn(
                at,
                Code::InputTypeUnknown,
                format!("input `{name}` has a non-string `type`; treating it as a string"),
            );
            return Some(InputType::String);
        };
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "string" => InputType::String,
            "number" => InputType::Number,
            "boolean" => InputType::Boolean,
            "enum" => InputType::Enum,
            t @ ("object" | "array") => {
                self.warn(
                    at,
                    Code::InputTypeUnsupported,
                    format!("`{t}` inputs are not supported: input `{name}` is treated as a string; accept a JSON string and parse it in execute"),
                );
                InputType::String
            }
            other => {
                let hint = match other {
                    "integer" | "int" | "float" => " (use `number`)",
                    "bool" => " (use `boolean`)",
                    "str" | "text" => " (use `string`)",
                    _ => "",
                };
                self.warn(
                    at,
                    Code::InputTypeUnknown,
                    format!("unknown type `{s}` for input `{name}`; treating it as a string{hint}"),
                );
                InputType::String
            }
        })
    }

    fn flag(&mut self, input: &str, key: &str, node: &Node<'_>) -> Option<bool> {
        match &node.data {
            Data::Scalar(Scalar::Boolean(b)) => Some(*b),
            Data::Scalar(Scalar::Null) => Some(false),
            _ => {
                let at = self.pos(node);
                self.error(
                    at,
                    Code::FieldType,
                    format!("`{key}` of input `{input}` must be true or false"),
                );
                None
            }
        }
    }

    /// Where the character `chars` characters into a scalar's value stands: exact when the
    /// value is spelled verbatim on one line, else the scalar's start.
    fn pos_within(&self, node: &Node<'_>, chars: usize) -> Position {
        match node.verbatim_col {
            Some(col) => Position::new(
                self.yaml_line + node.start.line().saturating_sub(1),
                col + chars + 1,
            ),
            None => self.pos(node),
        }
    }

    fn values(&mut self, name: &str, node: &Node<'_>) -> Option<Vec<String>> {
        // Each value with where it is written, so a duplicate is shown where it repeats.
        let raw: Vec<(String, Position)> = match &node.data {
            Data::Scalar(Scalar::String(s)) => {
                let mut chars = 0;
                let mut out = Vec::new();
                for piece in s.split(',') {
                    let lead = piece.chars().count() - piece.trim_start().chars().count();
                    out.push((piece.to_string(), self.pos_within(node, chars + lead)));
                    chars += piece.chars().count() + 1;
                }
                out
            }
            Data::Seq(items) => {
                let mut out = Vec::new();
                for item in items {
                    match scalar_text(item) {
                        Some(s) => out.push((s, self.pos(item))),
                        None => {
                            let at = self.pos(item);
                            self.error(
                                at,
                                Code::FieldType,
                                format!("values of enum input `{name}` must be plain strings"),
                            );
                            return None;
                        }
                    }
                }
                out
            }
            Data::Scalar(Scalar::Null) => Vec::new(),
            _ => {
                match scalar_text(node) {
                    Some(s) => vec![(s, self.pos(node))],
                    None => {
                        let at = self.pos(node);
                        self.error(at, Code::FieldType, format!("`values` of input `{name}` must be a comma-separated string or a list"));
                        return None;
                    }
                }
            }
        };
        let mut values: Vec<String> = Vec::new();
        for (v, at) in raw.iter().map(|(v, at)| (v.trim(), *at)) {
            if v.is_empty() {
                continue;
            }
            if values.iter().any(|seen| seen == v) {
                self.warn(
                    at,
                    Code::EnumValuesDuplicate,
                    format!("value `{v}` of input `{name}` is listed twice"),
                );
            } else {
                values.push(v.to_string());
            }
        }
        Some(values)
    }

    fn check_default(
        &mut self,
        name: &str,
        ty: InputType,
        values: &[String],
        v: Value,
        at: Position,
    ) -> Option<Value> {
        let coerced = match (ty, &v) {
            (InputType::Number, Value::Number(_))
            | (InputType::Boolean, Value::Bool(_))
            | (InputType::String, Value::String(_)) => return Some(v),
            (InputType::Enum, Value::String(s)) if values.contains(s) => return Some(v),
            (InputType::Number, Value::String(s)) => {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .map(|n| {
                        // Keep integers integral so the schema shows `5`, not `5.0`.
                        s.trim()
                            .parse::<i64>()
                            .map(Value::from)
                            .unwrap_or(Value::Number(n))
                    })
            }
            (InputType::Boolean, Value::String(s)) => match s.trim() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            (InputType::String, Value::Number(n)) => Some(Value::String(n.to_string())),
            (InputType::String, Value::Bool(b)) => Some(Value::String(b.to_string())),
            (InputType::Enum, Value::Number(_) | Value::Bool(_)) => {
                let s = v.to_string();
                values.contains(&s).then_some(Value::String(s))
            }
            _ => None,
        };
        let ty_name = match ty {
            InputType::String => "string",
            InputType::Number => "number",
            InputType::Boolean => "boolean",
            InputType::Enum => "enum",
        };
        match coerced {
            Some(c) => {
                self.warn(
                    at,
                    Code::DefaultCoerced,
                    format!("default of input `{name}` is read as the {ty_name} {c}"),
                );
                Some(c)
            }
            None if ty == InputType::Enum => {
                self.error(
                    at,
                    Code::DefaultInvalid,
                    format!(
                        "default {v} of input `{name}` is not one of its values: {}",
                        values.join(", ")
                    ),
                );
                None
            }
            None => {
                self.error(
                    at,
                    Code::DefaultInvalid,
                    format!("default {v} of input `{name}` is not a {ty_name}"),
                );
                None
            }
        }
    }

    /// Converts a YAML node to JSON, for defaults and unknown keys kept verbatim.
    fn json_of(&mut self, node: &Node<'_>, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            let at = self.pos(node);
            self.warn(
                at,
                Code::FieldType,
                format!("YAML nested deeper than {MAX_DEPTH} levels is dropped"),
            );
            return Value::Null;
        }
        match &node.data {
            Data::Scalar(s) => scalar_json(s),
            Data::Seq(items) => {
                Value::Array(items.iter().map(|i| self.json_of(i, depth + 1)).collect())
            }
            Data::Map(map) => {
                let mut out = Map::new();
                for (k, v) in map {
                    let key = match &k.data {
                        Data::Scalar(s) => match scalar_json(s) {
                            Value::String(s) => s,
                            other => other.to_string(),
                        },
                        _ => continue,
                    };
                    let v = self.json_of(v, depth + 1);
                    out.insert(key, v);
                }
                Value::Object(out)
            }
        }
    }
}

fn scalar_json(s: &Scalar<'_>) -> Value {
    match s {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(*b),
        Scalar::Integer(i) => Value::from(*i),
        Scalar::FloatingPoint(f) => {
            Number::from_f64(f.into_inner()).map_or(Value::Null, Value::Number)
        }
        Scalar::String(s) => Value::String(s.to_string()),
    }
}

/// The text of a scalar as the model would send it (`1`, `true`, `fast`).
fn scalar_text(node: &Node<'_>) -> Option<String> {
    match &node.data {
        Data::Scalar(Scalar::String(s)) => Some(s.to_string()),
        Data::Scalar(Scalar::Integer(i)) => Some(i.to_string()),
        Data::Scalar(Scalar::FloatingPoint(f)) => Some(f.to_string()),
        Data::Scalar(Scalar::Boolean(b)) => Some(b.to_string()),
        _ => None,
    }
}

/// The `version` of a TOOL.md, read leniently (the rest of the file may be broken):
/// `None` when there is no readable version, which sync treats as 0.
pub fn peek_version(bytes: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let split = frontmatter::split(text.strip_prefix('\u{feff}').unwrap_or(text)).ok()?;
    let doc = yaml::load(split.yaml).ok()??;
    let Data::Map(map) = &doc.data else {
        return None;
    };
    let (_, value) = map.iter().find(|(k, _)| k.as_str() == Some("version"))?;
    match &value.data {
        Data::Scalar(Scalar::Integer(n)) => u64::try_from(*n).ok(),
        Data::Scalar(Scalar::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}
