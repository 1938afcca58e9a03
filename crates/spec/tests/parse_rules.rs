//! Table-driven tests: one TOOL.md per rule of the format, with the exact findings expected.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::json;
use toolhost_spec::{Code, InputType, Language, Severity, parse_tool_md};

/// `(code, severity, line)` of one finding.
type Finding = (Code, Severity, u32);

/// Every finding, in order.
fn findings(src: &str) -> Vec<Finding> {
    let p = parse_tool_md(Path::new("TOOL.md"), src.as_bytes());
    let mut out: Vec<_> = p
        .diagnostics
        .iter()
        .map(|d| (d.code, d.severity, d.position.map_or(0, |p| p.line)))
        .collect();
    out.sort();
    out
}

const E: Severity = Severity::Error;
const W: Severity = Severity::Warning;

fn md(front: &str) -> String {
    format!("---\n{front}---\n\n# Tool\n\nDocs.\n")
}

const BASE: &str = "name: t\ndescription: Does t.\nversion: 1\n";

#[test]
fn every_rule_reports_what_and_where() {
    let cases: Vec<(&str, String, Vec<Finding>)> = vec![
        ("minimal valid", md(BASE), vec![]),
        (
            "no frontmatter",
            "# Title\n".into(),
            vec![(Code::FrontmatterMissing, E, 1)],
        ),
        (
            "unclosed frontmatter",
            "---\nname: t\n".into(),
            vec![(Code::FrontmatterUnclosed, E, 1)],
        ),
        (
            "yaml error reports its real line",
            md("name: t\ndescription: d\nversion: 1\n  bad: x\n"),
            vec![(Code::YamlSyntax, E, 5)],
        ),
        (
            "frontmatter is a list",
            md("- a\n- b\n"),
            vec![(Code::FrontmatterNotMapping, E, 2)],
        ),
        (
            "empty frontmatter",
            md(""),
            vec![
                (Code::DescriptionMissing, E, 1),
                (Code::NameMissing, E, 1),
                (Code::VersionMissing, W, 1),
            ],
        ),
        (
            "missing name",
            md("description: d\nversion: 1\n"),
            vec![(Code::NameMissing, E, 1)],
        ),
        (
            "name with a space",
            md("name: my tool\ndescription: d\nversion: 1\n"),
            vec![(Code::NameInvalid, E, 2)],
        ),
        (
            "name too long",
            md(&format!(
                "name: {}\ndescription: d\nversion: 1\n",
                "a".repeat(65)
            )),
            vec![(Code::NameInvalid, E, 2)],
        ),
        (
            "name not snake_case",
            md("name: webSearch\ndescription: d\nversion: 1\n"),
            vec![(Code::NameNotSnakeCase, W, 2)],
        ),
        (
            "name is a number",
            md("name: 42\ndescription: d\nversion: 1\n"),
            vec![(Code::FieldType, E, 2)],
        ),
        (
            "missing description",
            md("name: t\nversion: 1\n"),
            vec![(Code::DescriptionMissing, E, 1)],
        ),
        (
            "blank description",
            md("name: t\ndescription: \"  \"\nversion: 1\n"),
            vec![(Code::DescriptionMissing, E, 3)],
        ),
        (
            "missing version warns",
            md("name: t\ndescription: d\n"),
            vec![(Code::VersionMissing, W, 1)],
        ),
        (
            "negative version",
            md("name: t\ndescription: d\nversion: -1\n"),
            vec![(Code::VersionInvalid, E, 4)],
        ),
        (
            "fractional version",
            md("name: t\ndescription: d\nversion: 1.5\n"),
            vec![(Code::VersionInvalid, E, 4)],
        ),
        (
            "quoted version",
            md("name: t\ndescription: d\nversion: \"3\"\n"),
            vec![(Code::FieldType, W, 4)],
        ),
        (
            "unknown language",
            md(&format!("{BASE}language: rust\n")),
            vec![(Code::LanguageUnknown, E, 5)],
        ),
        (
            "unknown key kept",
            md(&format!("{BASE}author: me\n")),
            vec![(Code::FieldUnknown, W, 5)],
        ),
        (
            "inputs not a mapping",
            md(&format!("{BASE}inputs: [a]\n")),
            vec![(Code::FieldType, E, 5)],
        ),
        (
            "input not a mapping",
            md(&format!("{BASE}inputs:\n  q: string\n")),
            vec![(Code::InputInvalid, E, 6)],
        ),
        (
            "input without type",
            md(&format!("{BASE}inputs:\n  q:\n    description: d\n")),
            vec![(Code::InputTypeMissing, W, 6)],
        ),
        (
            "input without description",
            md(&format!("{BASE}inputs:\n  q:\n    type: string\n")),
            vec![(Code::InputDescriptionMissing, W, 6)],
        ),
        (
            "unknown input type",
            md(&format!(
                "{BASE}inputs:\n  q:\n    type: integer\n    description: d\n"
            )),
            vec![(Code::InputTypeUnknown, W, 7)],
        ),
        (
            "object input",
            md(&format!(
                "{BASE}inputs:\n  q:\n    type: object\n    description: d\n"
            )),
            vec![(Code::InputTypeUnsupported, W, 7)],
        ),
        (
            "array input",
            md(&format!(
                "{BASE}inputs:\n  q:\n    type: array\n    description: d\n"
            )),
            vec![(Code::InputTypeUnsupported, W, 7)],
        ),
        (
            "enum without values",
            md(&format!(
                "{BASE}inputs:\n  m:\n    type: enum\n    description: d\n"
            )),
            vec![(Code::EnumValuesMissing, E, 6)],
        ),
        (
            "enum with empty values",
            md(&format!(
                "{BASE}inputs:\n  m:\n    type: enum\n    values: \" , \"\n    description: d\n"
            )),
            vec![(Code::EnumValuesMissing, E, 8)],
        ),
        (
            "duplicate enum value",
            md(&format!(
                "{BASE}inputs:\n  m:\n    type: enum\n    values: a,b,a\n    description: d\n"
            )),
            vec![(Code::EnumValuesDuplicate, W, 8)],
        ),
        (
            "values on a string",
            md(&format!(
                "{BASE}inputs:\n  m:\n    type: string\n    values: a,b\n    description: d\n"
            )),
            vec![(Code::ValuesIgnored, W, 8)],
        ),
        (
            "optional not a bool",
            md(&format!(
                "{BASE}inputs:\n  m:\n    type: string\n    description: d\n    optional: maybe\n"
            )),
            vec![(Code::FieldType, E, 9)],
        ),
        (
            "default of wrong type",
            md(&format!(
                "{BASE}inputs:\n  n:\n    type: number\n    description: d\n    optional: true\n    default: lots\n"
            )),
            vec![(Code::DefaultInvalid, E, 10)],
        ),
        (
            "default coerced",
            md(&format!(
                "{BASE}inputs:\n  n:\n    type: number\n    description: d\n    optional: true\n    default: \"5\"\n"
            )),
            vec![(Code::DefaultCoerced, W, 10)],
        ),
        (
            "default not in enum",
            md(&format!(
                "{BASE}inputs:\n  m:\n    type: enum\n    values: a,b\n    description: d\n    optional: true\n    default: c\n"
            )),
            vec![(Code::DefaultInvalid, E, 11)],
        ),
        (
            "default on required input",
            md(&format!(
                "{BASE}inputs:\n  n:\n    type: number\n    description: d\n    default: 3\n"
            )),
            vec![(Code::DefaultOnRequired, W, 6)],
        ),
        (
            "unknown input key",
            md(&format!(
                "{BASE}inputs:\n  n:\n    type: number\n    description: d\n    min: 3\n"
            )),
            vec![(Code::FieldUnknown, W, 9)],
        ),
        (
            "odd input name",
            md(&format!(
                "{BASE}inputs:\n  \"a b\":\n    type: string\n    description: d\n"
            )),
            vec![(Code::InputNameInvalid, W, 6)],
        ),
        (
            "duplicate key is a YAML error",
            md("name: a\nname: b\ndescription: d\nversion: 1\n"),
            vec![(Code::YamlSyntax, E, 3)],
        ),
        (
            "empty body",
            "---\nname: t\ndescription: d\nversion: 1\n---\n".into(),
            vec![(Code::BodyEmpty, W, 6)],
        ),
    ];
    let mut failures = Vec::new();
    for (what, src, expected) in cases {
        let mut expected = expected;
        expected.sort();
        let got = findings(&src);
        if got != expected {
            failures.push(format!(
                "{what}:\n  expected {expected:?}\n  got      {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn invalid_utf8_points_at_the_bad_byte() {
    let p = parse_tool_md(Path::new("TOOL.md"), b"---\nname: t\xff\n");
    assert_eq!(p.diagnostics.len(), 1);
    let d = &p.diagnostics[0];
    assert_eq!(
        (d.code, d.position.unwrap().line, d.position.unwrap().column),
        (Code::NotUtf8, 2, 8)
    );
}

#[test]
fn fields_and_defaults_follow_the_seed() {
    let src = "---\nname: my_db\ndescription: Query it.\nversion: 2\n---\n# My DB\n";
    let m = parse_tool_md(Path::new("TOOL.md"), src.as_bytes())
        .manifest
        .unwrap();
    assert_eq!(m.label, "my_db", "label defaults to name");
    assert_eq!(
        m.language,
        Language::Typescript,
        "language defaults to typescript"
    );
    assert_eq!(m.version, 2);
    assert!(m.version_declared);
    assert!(m.inputs.is_empty());
    assert_eq!(m.body, "# My DB\n");

    let src = "\u{feff}---\r\nname: b\r\ndescription: d\r\nlanguage: Python\r\n---\r\nx";
    let m = parse_tool_md(Path::new("TOOL.md"), src.as_bytes())
        .manifest
        .unwrap();
    assert_eq!(
        m.language,
        Language::Python,
        "BOM, CRLF and case are tolerated"
    );
    assert_eq!(m.version, 0);
    assert!(!m.version_declared);
}

#[test]
fn timeouts_are_a_toolhost_extension() {
    let src = md(&format!("{BASE}timeout: 120\nidle_timeout: 2.5\n"));
    let p = parse_tool_md(Path::new("TOOL.md"), src.as_bytes());
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let m = p.manifest.unwrap();
    assert_eq!(m.timeout, Some(std::time::Duration::from_secs(120)));
    assert_eq!(m.idle_timeout, Some(std::time::Duration::from_millis(2500)));
    for bad in [
        "timeout: 0",
        "timeout: -3",
        "timeout: soon",
        "idle_timeout: [1]",
    ] {
        let p = parse_tool_md(
            Path::new("TOOL.md"),
            md(&format!("{BASE}{bad}\n")).as_bytes(),
        );
        assert_eq!(
            p.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(),
            [Code::FieldType],
            "{bad}"
        );
    }
}

#[test]
fn values_accept_comma_strings_and_lists() {
    let src = md(&format!(
        "{BASE}inputs:\n  a:\n    type: enum\n    values: single, batch\n    description: d\n  b:\n    type: enum\n    values: [x, 2, true]\n    description: d\n"
    ));
    let m = parse_tool_md(Path::new("TOOL.md"), src.as_bytes())
        .manifest
        .unwrap();
    assert_eq!(m.inputs[0].values, ["single", "batch"]);
    assert_eq!(m.inputs[1].values, ["x", "2", "true"]);
    assert_eq!(m.inputs[0].ty, InputType::Enum);
}

// A duplicate is shown where it repeats (the first spelling is valid); where the value is
// not written character for character (escapes), at the start of the value.
#[test]
fn a_duplicate_enum_value_points_at_the_repeat() {
    let cases = [
        ("values: fast, slow, fast", (8, 25)),
        ("values:   'é,  b ,b'", (8, 23)),
        ("values: \"a, b, a\"", (8, 20)),
        ("values: [a, b, a]", (8, 20)),
        ("values:\n      - a\n      - a", (10, 9)),
        ("values: \"a, \\x62, b\"", (8, 13)),
    ];
    for (values, expected) in cases {
        let src = md(&format!(
            "{BASE}inputs:\n  m:\n    type: enum\n    {values}\n    description: d\n"
        ));
        let p = parse_tool_md(Path::new("TOOL.md"), src.as_bytes());
        let found: Vec<_> = p
            .diagnostics
            .iter()
            .map(|d| {
                let at = d.position.unwrap();
                (d.code, (at.line, at.column))
            })
            .collect();
        assert_eq!(found, [(Code::EnumValuesDuplicate, expected)], "{values}");
    }
}

#[test]
fn unknown_keys_are_kept() {
    let src = md(&format!("{BASE}retries: 30\ntags: [a, b]\n"));
    let p = parse_tool_md(Path::new("TOOL.md"), src.as_bytes());
    let m = p.manifest.unwrap();
    assert_eq!(m.extra.get("retries"), Some(&json!(30)));
    assert_eq!(m.extra.get("tags"), Some(&json!(["a", "b"])));
}

#[test]
fn schema_is_strict_and_provider_friendly() {
    let src = md(&format!(
        "{BASE}inputs:\n  action:\n    type: enum\n    values: query,stats\n    description: What to do.\n  sql:\n    type: string\n    description: SQL.\n    optional: true\n  limit:\n    type: number\n    description: Max rows.\n    optional: true\n    default: 10\n  token:\n    type: string\n    description: API token.\n    optional: true\n    sensitive: true\n  verbose:\n    type: boolean\n    description: More output.\n    optional: true\n    default: \"false\"\n  data:\n    type: object\n    description: JSON.\n    optional: true\n"
    ));
    let p = parse_tool_md(Path::new("TOOL.md"), src.as_bytes());
    let m = p.manifest.unwrap();
    assert_eq!(
        m.input_schema(),
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["query", "stats"], "description": "What to do."},
                "sql": {"type": "string", "description": "SQL."},
                "limit": {"type": "number", "description": "Max rows.", "default": 10},
                "token": {"type": "string", "description": "API token."},
                "verbose": {"type": "boolean", "description": "More output.", "default": false},
                "data": {"type": "string", "description": "JSON."}
            },
            "required": ["action"],
            "additionalProperties": false
        })
    );
    assert_eq!(m.sensitive_inputs().collect::<Vec<_>>(), ["token"]);
    // Property order is declaration order, so prompts are stable.
    let schema = m.input_schema();
    let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["action", "sql", "limit", "token", "verbose", "data"]);
}

#[test]
fn manifest_is_absent_exactly_when_there_is_an_error() {
    for src in [
        md(BASE),
        md("name: t\n"),
        md(&format!(
            "{BASE}inputs:\n  m:\n    type: enum\n    description: d\n"
        )),
    ] {
        let p = parse_tool_md(Path::new("TOOL.md"), src.as_bytes());
        assert_eq!(
            p.manifest.is_none(),
            p.diagnostics.iter().any(|d| d.is_error()),
            "{src}"
        );
    }
}
