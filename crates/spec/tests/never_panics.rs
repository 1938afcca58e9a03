//! Property tests: parsing and linting never panic, whatever the input.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use proptest::prelude::*;
use toolhost_spec::{Code, lint_entry, parse_tool_md};

/// Fragments that steer generated inputs into the interesting parts of the grammar.
fn frontmatter_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("---\n".to_string()),
        Just("name: t\n".to_string()),
        Just("description: d\n".to_string()),
        Just("version: 1\n".to_string()),
        Just("inputs:\n".to_string()),
        Just("  q:\n".to_string()),
        Just("    type: enum\n".to_string()),
        Just("    values: a,b\n".to_string()),
        Just("    default: [1, {a: b}]\n".to_string()),
        Just("&a [*a]\n".to_string()),
        Just("!!binary x\n".to_string()),
        Just("\t".to_string()),
        "[ -~]{0,12}\n?",
        any::<String>(),
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn parser_survives_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let p = parse_tool_md(Path::new("TOOL.md"), &bytes);
        prop_assert_eq!(p.manifest.is_none(), p.diagnostics.iter().any(|d| d.is_error()));
    }

    #[test]
    fn parser_survives_frontmatter_like_text(text in frontmatter_like()) {
        let p = parse_tool_md(Path::new("TOOL.md"), text.as_bytes());
        for d in &p.diagnostics {
            let pos = d.position.unwrap();
            prop_assert!(pos.line >= 1 && pos.column >= 1, "{}", d);
        }
    }

    // A panic inside the linter is caught and reported as a finding (users get an answer),
    // so "no panic" means: no finding of that kind, and every finding points into the text.
    #[test]
    fn linter_survives_arbitrary_text(text in "(\\PC|\\n|\\t){0,300}", ts in any::<bool>()) {
        let lines: Vec<usize> = text.split('\n').map(|l| l.chars().count()).collect();
        for d in lint_entry(Path::new("index.ts"), &text, ts) {
            prop_assert!(!d.is_analysis_failure(), "the linter panicked on {:?}", text);
            let pos = d.position.unwrap();
            let line = usize::try_from(pos.line).unwrap();
            prop_assert!(line >= 1 && line <= lines.len(), "{} on {:?}", d, text);
            let column = usize::try_from(pos.column).unwrap();
            prop_assert!(column >= 1 && column <= lines[line - 1] + 1, "{} on {:?}", d, text);
        }
    }
}

#[test]
fn deeply_nested_yaml_is_an_error_not_a_stack_overflow() {
    let flow = format!("x: {}{}", "[".repeat(100_000), "]".repeat(100_000));
    let block = (0..3000)
        .map(|i| format!("{}k{i}:", " ".repeat(i)))
        .collect::<Vec<_>>()
        .join("\n");
    let compact = format!("{}1", "- ".repeat(100_000));
    let keys = format!("{}1", "? ".repeat(100_000));
    for body in [flow, block, compact, keys] {
        let src = format!("---\nname: t\ndescription: d\nversion: 1\n{body}\n---\n");
        let p = parse_tool_md(Path::new("TOOL.md"), src.as_bytes());
        assert!(p.manifest.is_none());
        assert!(
            p.diagnostics.iter().any(|d| d.code == Code::YamlSyntax),
            "{:?}",
            p.diagnostics
        );
    }
}
