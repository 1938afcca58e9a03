//! `toolhost new NAME [--dir DIR] [--language typescript|python|bash]`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use toolhost_catalog::check::check_folder;
use toolhost_spec::{Language, names};

use crate::output::print_diagnostics;

#[derive(clap::Args)]
pub struct Args {
    /// The tool's name (snake_case); also the folder's name.
    name: String,
    /// Where to create the tool folder (made if missing).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// The language to write the tool in.
    #[arg(long, default_value = "typescript", value_parser = ["typescript", "python", "bash"])]
    language: String,
}

const TOOL_MD: &str = include_str!("../../templates/TOOL.md");
const INDEX_TS: &str = include_str!("../../templates/index.ts");
const INDEX_PY: &str = include_str!("../../templates/index.py");
const INDEX_SH: &str = include_str!("../../templates/index.sh");

pub fn run(args: Args) -> Result<ExitCode> {
    if !names::is_snake_case(&args.name) || !names::is_valid_tool_name(&args.name) {
        bail!(
            "invalid tool name {:?}: use snake_case of at most 64 characters, such as {:?}",
            args.name,
            names::to_snake_case(&args.name)
        );
    }
    let language = Language::parse(&args.language).context("unknown language")?;
    // A tool root that does not exist yet is made (the README's first steps run `new`
    // on a fresh machine); something else in the way is not replaced.
    if args.dir.exists() && !args.dir.is_dir() {
        bail!("{} exists and is not a directory", args.dir.display());
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let dir = args.dir.join(&args.name);
    if dir.exists() {
        bail!(
            "{} already exists: choose another name or remove it",
            dir.display()
        );
    }
    let label = label_of(&args.name);
    let fill = |t: &str| {
        t.replace("{{name}}", &args.name)
            .replace("{{label}}", &label)
            .replace("{{language}}", language.as_str())
    };
    let (entry_name, entry) = match language {
        Language::Typescript => ("index.ts", INDEX_TS),
        Language::Python => ("index.py", INDEX_PY),
        Language::Bash => ("index.sh", INDEX_SH),
    };
    std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(dir.join("TOOL.md"), fill(TOOL_MD))?;
    let entry_path = dir.join(entry_name);
    std::fs::write(&entry_path, fill(entry))?;
    if language != Language::Typescript {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&entry_path, std::fs::Permissions::from_mode(0o755))?;
    }

    let report = check_folder(&dir);
    print_diagnostics(&mut std::io::stderr().lock(), &report.diagnostics)?;
    if report.has_errors() {
        bail!(
            "the scaffold for {} does not pass check (this is a bug in toolhost)",
            dir.display()
        );
    }
    println!("created {} ({})", dir.display(), language.as_str());
    println!(
        "next: edit TOOL.md and {entry_name}, then run `toolhost check {}`",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `web_search` → `Web Search`.
fn label_of(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}
