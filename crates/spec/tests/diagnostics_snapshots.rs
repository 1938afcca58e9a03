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
    let names: Vec<_> = examples
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(String::from))
        .collect();
    assert_eq!(
        names,
        ["hello", "my_db"],
        "the seed's two complete examples"
    );
    for folder in &examples {
        let report = load_folder(folder, LoadOptions { lint: true });
        assert!(
            report.diagnostics.is_empty(),
            "seed example {}: {:#?}",
            folder.display(),
            report.diagnostics
        );
        assert!(report.tool().is_some());
    }
}
