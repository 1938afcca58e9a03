//! Printing shared by commands: diagnostics, summaries, JSON.

use std::io::{self, Write};

use serde::Serialize;
use toolhost_spec::{Diagnostic, Severity};

/// Counts of errors and warnings.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub struct Tally {
    pub errors: usize,
    pub warnings: usize,
}

impl Tally {
    pub fn of(diagnostics: &[Diagnostic]) -> Tally {
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        Tally {
            errors,
            warnings: diagnostics.len() - errors,
        }
    }
}

pub fn print_diagnostics(out: &mut impl Write, diagnostics: &[Diagnostic]) -> io::Result<()> {
    for d in diagnostics {
        writeln!(out, "{d}")?;
    }
    Ok(())
}

pub fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
