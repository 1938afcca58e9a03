//! The validated contents of a TOOL.md file.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value, json};

/// Implementation language of a tool, from the `language` frontmatter key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// TypeScript or JavaScript, run by Node.js (the default when `language` is absent).
    #[default]
    Typescript,
    /// Python, run as a process per call.
    Python,
    /// Bash, run as a process per call.
    Bash,
}

impl Language {
    /// Every language, in the order TOOL.md's documentation lists them.
    pub const ALL: [Language; 3] = [Language::Typescript, Language::Python, Language::Bash];

    /// The spelling TOOL.md's `language` key uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Typescript => "typescript",
            Language::Python => "python",
            Language::Bash => "bash",
        }
    }

    /// The language TOOL.md spells `s`, if any.
    pub fn parse(s: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.as_str() == s)
    }

    /// Entry file names, in order of preference: when several exist the first wins.
    pub fn entry_candidates(self) -> &'static [&'static str] {
        match self {
            Language::Typescript => &["index.ts", "index.js"],
            Language::Python => &["index.py"],
            Language::Bash => &["index.sh"],
        }
    }
}

/// Type of one input parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    /// Any text (also what unknown or missing types fall back to).
    String,
    /// A JSON number, integer or not.
    Number,
    /// `true` or `false`.
    Boolean,
    /// One of the input's `values`, as a string.
    Enum,
}

/// One entry under `inputs:`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Input {
    /// The parameter's name in the call's arguments.
    pub name: String,
    /// What values the parameter takes.
    #[serde(rename = "type")]
    pub ty: InputType,
    /// What to pass, for the agent.
    pub description: String,
    /// The call may leave the parameter out.
    pub optional: bool,
    /// Never logged or echoed back; kept as tool metadata, not as a schema keyword.
    pub sensitive: bool,
    /// Allowed values of an enum input, in declaration order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// The value an optional input takes when the call leaves it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
}

/// A tool's metadata and documentation, validated against the TOOL.md format.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolManifest {
    /// The tool's name, as agents call it.
    pub name: String,
    /// Display name for people (MCP's `title`); `name` when TOOL.md gives none.
    pub label: String,
    /// What the tool does, for the agent choosing among tools.
    pub description: String,
    /// 0 when the frontmatter has no `version` (see [`ToolManifest::version_declared`]).
    pub version: u64,
    /// Whether the frontmatter had a `version` at all, as opposed to an explicit 0.
    pub version_declared: bool,
    /// What runs the entry file.
    pub language: Language,
    /// The call's parameters, in declaration order.
    pub inputs: Vec<Input>,
    /// Toolhost extension: the call's deadline (`timeout: 120`, in seconds).
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::seconds::opt_secs"
    )]
    pub timeout: Option<Duration>,
    /// Toolhost extension: how long a call may go without a progress update.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::seconds::opt_secs"
    )]
    pub idle_timeout: Option<Duration>,
    /// Toolhost extension: the tool needs the network (`network: true`); without it the
    /// tool's sandbox has none.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub network: bool,
    /// Toolhost extension: the host programs the tool runs (`programs: [ffmpeg]`), which
    /// `toolhost check` looks for on the tools' `PATH`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<String>,
    /// Frontmatter keys this version does not know, kept verbatim.
    pub extra: Map<String, Value>,
    /// The Markdown body: the documentation the agent reads.
    pub body: String,
}

impl ToolManifest {
    /// The JSON Schema of the tool's parameters.
    ///
    /// Enums are `{"type": "string", "enum": [...]}` rather than a union of literal schemas,
    /// which several model providers reject.
    pub fn input_schema(&self) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for input in &self.inputs {
            let mut prop = Map::new();
            let ty = match input.ty {
                InputType::String | InputType::Enum => "string",
                InputType::Number => "number",
                InputType::Boolean => "boolean",
            };
            prop.insert("type".into(), json!(ty));
            if input.ty == InputType::Enum {
                prop.insert("enum".into(), json!(input.values));
            }
            if !input.description.is_empty() {
                prop.insert("description".into(), json!(input.description));
            }
            if let Some(default) = &input.default {
                prop.insert("default".into(), default.clone());
            }
            properties.insert(input.name.clone(), Value::Object(prop));
            if !input.optional {
                required.push(json!(input.name));
            }
        }
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    /// Names of the inputs marked `sensitive`, for redaction.
    pub fn sensitive_inputs(&self) -> impl Iterator<Item = &str> {
        self.inputs
            .iter()
            .filter(|i| i.sensitive)
            .map(|i| i.name.as_str())
    }
}
