//! Helpers shared by the spec tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The seed documents live in `shared/seeds` beside the checkout (CI lays them there too),
/// so look for it in each ancestor of the crate.
pub fn seed_doc(prefix: &str) -> String {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir
        .ancestors()
        .map(|a| a.join("shared/seeds"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| {
            panic!(
                "no shared/seeds beside any ancestor of {}",
                crate_dir.display()
            )
        });
    let entry = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("seed documents not found at {}: {e}", root.display()))
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no seed document {prefix}* in {}", root.display()));
    std::fs::read_to_string(entry.path()).unwrap()
}

/// The fenced code blocks of a Markdown text, with their info strings.
pub fn code_blocks(doc: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut body = String::new();
            for l in lines.by_ref() {
                if l.starts_with("```") {
                    break;
                }
                body.push_str(l);
                body.push('\n');
            }
            blocks.push((info.trim().to_string(), body));
        }
    }
    blocks
}

/// Every complete example tool in the long seed document: (TOOL.md, index.ts) pairs.
pub fn seed_example_tools() -> Vec<(String, String)> {
    let doc = seed_doc("001_");
    let blocks = code_blocks(&doc);
    blocks
        .windows(2)
        .filter(|w| {
            w[0].0 == "yaml"
                && w[0].1.starts_with("---\nname:")
                && w[0].1.contains("\n---\n\n# ")
                && w[1].0 == "typescript"
                && w[1].1.contains("export async function execute")
        })
        .map(|w| (w[0].1.clone(), w[1].1.clone()))
        .collect()
}
