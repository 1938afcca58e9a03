//! Embeds `src/node/vendor/` (the npm packages Platypus plugins may import without shipping
//! them, bundled by `scripts/vendor-node-packages.mjs`): a table of every file, its path
//! under that folder and its bytes, which the runtime installs beside the worker harness.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let vendor = manifest.join("src/node/vendor");
    println!("cargo:rerun-if-changed={}", vendor.display());
    let mut files = Vec::new();
    walk(&vendor, &vendor, &mut files);
    files.sort();
    let mut out =
        String::from("/// Every file of `src/node/vendor/`: its path there, and its bytes.\n");
    out.push_str("pub(crate) static VENDOR: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest =
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("node_vendor.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("cannot write {}: {e}", dest.display());
    }
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(root, &path, files);
        } else if kind.is_file()
            && let Ok(rel) = path.strip_prefix(root)
        {
            files.push((rel.to_string_lossy().into_owned(), path));
        }
    }
}
