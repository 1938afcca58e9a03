//! TOOL.md files written to hurt the parser (security review rows 61–64): each gets a
//! clear finding at its line, never a panic, a hang or an unbounded expansion.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use toolhost_spec::{Code, Severity, parse_tool_md};

const E: Severity = Severity::Error;
const W: Severity = Severity::Warning;

/// `(code, severity, line)` of one finding.
type Finding = (Code, Severity, u32);

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

fn md(front: &str) -> String {
    format!("---\n{front}---\n\n# Tool\n\nDocs.\n")
}

/// Row 61: nine levels of nine aliases would expand to 9^10 nodes.
#[test]
fn a_billion_laughs_stops_at_the_node_limit() {
    let mut front = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = format!("*a{}", i - 1);
        front += &format!("a{i}: &a{i} [{p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}]\n");
    }
    front += "name: t\ndescription: d\nversion: 1\n";
    let p = parse_tool_md(Path::new("TOOL.md"), md(&front).as_bytes());
    assert!(p.manifest.is_none());
    let d = &p.diagnostics[0];
    assert_eq!((d.code, d.severity), (Code::YamlSyntax, E));
    assert!(d.message.contains("nodes"), "{}", d.message);
    // The alias that crosses the limit (a5 = 9^6 nodes), on its own line.
    assert_eq!(d.position.map(|p| p.line), Some(7));
}

/// Row 63: odd YAML gets the finding of the rule it breaks, at its line.
#[test]
fn yaml_oddities_get_clear_findings() {
    let cases: Vec<(&str, String, Vec<Finding>)> = vec![
        (
            "a raw NUL byte",
            md("name: t\ndescription: a\u{0}b\nversion: 1\n"),
            vec![(Code::YamlSyntax, E, 3)],
        ),
        (
            "an escaped NUL in a quoted string is text",
            md("name: t\ndescription: \"a\\0b\"\nversion: 1\n"),
            vec![],
        ),
        (
            "a byte-order mark",
            format!("\u{feff}{}", md("name: t\ndescription: d\nversion: 1\n")),
            vec![],
        ),
        (
            "a duplicate key",
            md("name: t\nname: u\ndescription: d\nversion: 1\n"),
            vec![(Code::YamlSyntax, E, 3)],
        ),
        (
            "a binary version",
            md("name: t\ndescription: d\nversion: !!binary AA==\n"),
            vec![(Code::VersionInvalid, E, 4)],
        ),
        (
            "a version beyond 64 bits",
            md("name: t\ndescription: d\nversion: 99999999999999999999999\n"),
            vec![(Code::VersionInvalid, E, 4)],
        ),
        (
            "a tagged huge int",
            md("name: t\ndescription: d\nversion: !!int 99999999999999999999999\n"),
            vec![(Code::VersionInvalid, E, 4)],
        ),
        (
            // YAML 1.2's core schema has no merge keys: `<<` is an ordinary (unknown) key,
            // so nothing is pulled in from the anchor.
            "a merge key does not merge",
            md("b: &b {name: t}\n<<: *b\ndescription: d\nversion: 1\n"),
            vec![
                (Code::FieldUnknown, W, 2),
                (Code::FieldUnknown, W, 3),
                (Code::NameMissing, E, 1),
            ],
        ),
    ];
    for (what, src, expected) in cases {
        assert_eq!(findings(&src), expected, "{what}");
    }
    // A custom tag is ignored: the value is the plain scalar.
    let p = parse_tool_md(
        Path::new("TOOL.md"),
        md("name: !custom t\ndescription: d\nversion: 1\n").as_bytes(),
    );
    assert_eq!(p.manifest.unwrap().name, "t");
}

/// Row 64: a huge description is read whole and served as written; a huge plain key is a
/// YAML error at its line (YAML caps implicit keys at 1024 characters).
#[test]
fn huge_values_and_keys_are_read_whole() {
    let description = "d".repeat(20 << 20);
    let p = parse_tool_md(
        Path::new("TOOL.md"),
        md(&format!(
            "name: t\ndescription: {description}\nversion: 1\n"
        ))
        .as_bytes(),
    );
    assert_eq!(p.manifest.unwrap().description.len(), 20 << 20);
    let key = "k".repeat(2 << 20);
    let found = findings(&md(&format!(
        "name: t\ndescription: d\nversion: 1\n{key}: x\n"
    )));
    assert_eq!(found, vec![(Code::YamlSyntax, E, 5)]);
}
