//! Embeds `seed/tools/` (Officer's standard tools) in the binary: a table of every file,
//! relative path and bytes, for `toolhost init` and `serve`'s first start to install.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let seed = manifest.join("../../seed/tools");
    println!("cargo:rerun-if-changed={}", seed.display());
    let mut files = Vec::new();
    if seed.is_dir() {
        walk(&seed, &seed, &mut files);
    }
    files.sort();
    let mut out = String::from(
        "/// Every file of `seed/tools/`: its path under that folder, and its bytes.\n",
    );
    out.push_str("pub static SEED_TOOLS: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            abs.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("seed_tools.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("cannot write {}: {e}", dest.display());
    }
}

/// Regular files under `dir`, links and hidden entries skipped.
fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        println!("cargo:rerun-if-changed={}", path.display());
        if kind.is_dir() {
            walk(root, &path, files);
        } else if kind.is_file()
            && let Ok(rel) = path.strip_prefix(root)
        {
            let abs = std::fs::canonicalize(&path).unwrap_or(path.clone());
            files.push((rel.to_string_lossy().into_owned(), abs));
        }
    }
}
