//! Snapshot tests: the exact text `toolhost check` prints for each fixture folder.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use toolhost_spec::{LoadOptions, load_folder};

fn render(name: &str) -> String {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let report = load_folder(&fixtures.join(name), LoadOptions { lint: true });
    let mut diags = report.diagnostics;
    diags.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    diags
        .iter()
        .map(|d| {
            d.to_string()
                .replace(&format!("{}/", fixtures.display()), "")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

macro_rules! snapshot {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), render(stringify!($name)));
        }
    )*};
}

snapshot!(
    yaml_error,
    many_mistakes,
    warnings_only,
    no_entry,
    both_entries,
    class_pattern,
    console_output,
    commonjs
);

#[test]
fn seed_examples_are_clean() {
    let examples = common::seed_example_tools();
    assert!(
        examples.len() >= 2,
        "expected the seed's hello and my_db examples, found {}",
        examples.len()
    );
    let dir = tempfile_dir();
    for (i, (tool_md, index_ts)) in examples.iter().enumerate() {
        let folder = dir.join(format!("example{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("TOOL.md"), tool_md).unwrap();
        std::fs::write(folder.join("index.ts"), index_ts).unwrap();
        let report = load_folder(&folder, LoadOptions { lint: true });
        assert!(
            report.diagnostics.is_empty(),
            "seed example {i}: {:#?}",
            report.diagnostics
        );
        assert!(report.tool().is_some());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolhost-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
