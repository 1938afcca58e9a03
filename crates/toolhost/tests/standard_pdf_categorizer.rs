//! The standard tool `pdf_categorizer` (`seed/tools/pdf_categorizer`), through
//! `toolhost call` and `toolhost mcp`, in the sandbox, on a folder of PDFs made at run
//! time: invoices, a receipt, a contract, a scanned (image-only) receipt found by OCR, an
//! uncategorisable note, a damaged PDF and a file that only claims to be one. The dry run
//! changes nothing; a move puts each file in its category folder without overwriting.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;
mod machine;
#[path = "mcp/pdf.rs"]
mod pdf;
#[path = "mcp/standard.rs"]
mod standard;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use standard::{Officer, text_of};

fn programs() {
    machine::program("tesseract", "tesseract-ocr");
    machine::program("pdftoppm", "poppler-utils");
    machine::program("pdftotext", "poppler-utils");
}

/// `HOME/inbox` with the corpus; returns the officer.
fn corpus() -> Officer {
    programs();
    let o = Officer::new("");
    let inbox = o.home().join("inbox");
    std::fs::create_dir_all(inbox.join("sub")).unwrap();
    let docs: &[(&str, &[&str])] = &[
        (
            "acme.pdf",
            &[
                "ACME GmbH",
                "Invoice",
                "Invoice number 2026-0042",
                "Amount due 318.50 EUR",
                "VAT 19%",
            ],
        ),
        (
            "globex.pdf",
            &["INVOICE", "Bill to: Ada Lovelace", "Due date 2026-02-10"],
        ),
        (
            "cafe.pdf",
            &[
                "Receipt",
                "Cafe Central",
                "Amount paid 4.20",
                "Thank you for your purchase",
            ],
        ),
        (
            "lease.pdf",
            &[
                "Lease Agreement",
                "The parties hereby agree as follows.",
                "Governing law: Austria",
                "Signature",
            ],
        ),
        (
            "notes.pdf",
            &["Meeting notes", "Discuss the roadmap on Friday"],
        ),
        (
            "sub/nested.pdf",
            &["Invoice", "Invoice number 77", "Amount due 10.00"],
        ),
    ];
    for (name, lines) in docs {
        std::fs::write(inbox.join(name), pdf::text_pdf(&[lines])).unwrap();
    }
    std::fs::write(
        inbox.join("scan.pdf"),
        pdf::scanned_pdf(
            &["RECEIPT", "Amount paid 12.00", "Card payment"],
            200,
            &o.dir.path().join("work"),
        ),
    )
    .unwrap();
    std::fs::write(inbox.join("broken.pdf"), "%PDF-1.4\nthis is not a PDF body").unwrap();
    std::fs::write(inbox.join("fake.pdf"), "just some text").unwrap();
    std::fs::write(inbox.join("readme.txt"), "not a pdf").unwrap();
    o
}

/// Every file under `dir` (relative path → contents).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(
                    e.path().strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(e.path()).unwrap(),
                );
            }
        }
    }
    out
}

fn line<'a>(text: &'a str, file: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("{file} → ")))
        .unwrap_or_else(|| panic!("no line for {file}: {text}"))
}

#[test]
fn a_dry_run_changes_nothing_and_says_where_each_file_would_go() {
    let o = corpus();
    let inbox = o.home().join("inbox");
    let before = tree(&o.home());
    let args = json!({"source_dir": "inbox"});
    let call = o.call("pdf_categorizer", args.clone());
    assert!(!call.is_error(), "{}", call.text());
    let text = call.text();
    let mcp = o.mcp_call("pdf_categorizer", args);
    assert_eq!(mcp["isError"], false);
    assert_eq!(text_of(&mcp), text);
    assert_eq!(tree(&o.home()), before, "a dry run changed the disk");
    assert!(!inbox.join("sorted").exists());
    assert!(
        call.stderr.contains("reading scan.pdf"),
        "progress: {}",
        call.stderr
    );

    assert!(text.starts_with("Dry run (nothing was changed"), "{text}");
    assert!(text.contains("8 PDFs in /officer/user/inbox"), "{text}");
    assert!(
        line(&text, "acme.pdf").contains("→ invoice (score"),
        "{text}"
    );
    assert!(
        line(&text, "acme.pdf").contains("would go to sorted/invoice/"),
        "{text}"
    );
    assert!(line(&text, "globex.pdf").contains("→ invoice"), "{text}");
    assert!(line(&text, "cafe.pdf").contains("→ receipt"), "{text}");
    assert!(line(&text, "lease.pdf").contains("→ contract"), "{text}");
    assert!(
        line(&text, "notes.pdf").contains("→ other (no keywords matched"),
        "{text}"
    );
    let scan = line(&text, "scan.pdf");
    assert!(
        scan.contains("→ receipt") && scan.contains("read by OCR"),
        "{text}"
    );
    assert!(
        line(&text, "broken.pdf").contains("not sorted: not a readable PDF"),
        "{text}"
    );
    assert!(
        line(&text, "fake.pdf").contains("not sorted: not a PDF"),
        "{text}"
    );
    assert!(
        !text.contains("nested.pdf") && !text.contains("readme"),
        "{text}"
    );

    // Without OCR the scan has no words: other.
    let text = o
        .call(
            "pdf_categorizer",
            json!({"source_dir": "inbox", "ocr_fallback": false}),
        )
        .text();
    assert!(line(&text, "scan.pdf").contains("→ other"), "{text}");

    // Mistakes the model can fix.
    let text = o.call("pdf_categorizer", json!({"source_dir": "nope"}));
    assert!(text.is_error() && text.text().contains("No such folder: /officer/user/nope"));
    let text = o.call(
        "pdf_categorizer",
        json!({"source_dir": "inbox", "rules": "{tax"}),
    );
    assert!(
        text.is_error() && text.text().contains("rules is not valid JSON"),
        "{}",
        text.text()
    );
    let text = o.call(
        "pdf_categorizer",
        json!({"source_dir": "inbox", "rules": "{\"tax\": [\"irs\"]}"}),
    );
    assert!(
        text.is_error() && text.text().contains("not in categories"),
        "{}",
        text.text()
    );
}

#[test]
fn move_sorts_into_category_folders_without_overwriting() {
    let o = corpus();
    let inbox = o.home().join("inbox");
    // A file already sorted under the same name stays as it is.
    std::fs::create_dir_all(inbox.join("sorted/invoice")).unwrap();
    std::fs::write(inbox.join("sorted/invoice/acme.pdf"), "older acme").unwrap();
    let acme = std::fs::read(inbox.join("acme.pdf")).unwrap();

    let call = o.call(
        "pdf_categorizer",
        json!({"source_dir": "inbox", "mode": "move"}),
    );
    assert!(!call.is_error(), "{}", call.text());
    let text = call.text();
    assert!(
        line(&text, "acme.pdf").contains("moved to invoice/acme (2).pdf"),
        "{text}"
    );
    let after: Vec<String> = tree(&inbox).into_keys().collect();
    assert_eq!(
        after,
        [
            "broken.pdf",
            "fake.pdf",
            "readme.txt",
            "sorted/contract/lease.pdf",
            "sorted/invoice/acme (2).pdf",
            "sorted/invoice/acme.pdf",
            "sorted/invoice/globex.pdf",
            "sorted/other/notes.pdf",
            "sorted/receipt/cafe.pdf",
            "sorted/receipt/scan.pdf",
            "sub/nested.pdf",
        ],
        "{text}"
    );
    assert_eq!(
        std::fs::read(inbox.join("sorted/invoice/acme.pdf")).unwrap(),
        b"older acme"
    );
    assert_eq!(
        std::fs::read(inbox.join("sorted/invoice/acme (2).pdf")).unwrap(),
        acme
    );

    // Copy, through MCP, with categories and rules of the user's own, recursively (never
    // into what is already sorted); the originals stay.
    let args = json!({"source_dir": "/officer/user/inbox", "mode": "copy", "recursive": true,
        "categories": "bills,other",
        "rules": "{\"bills\": [\"invoice\", \"amount due\"]}"});
    let result = o.mcp_call("pdf_categorizer", args);
    let text = text_of(&result);
    assert_eq!(result["isError"], false, "{text}");
    assert!(
        line(&text, "sub/nested.pdf").contains("copied to bills/nested.pdf"),
        "{text}"
    );
    assert!(
        !text.contains("sorted/"),
        "sorted files were sorted again: {text}"
    );
    assert!(inbox.join("sub/nested.pdf").exists());
    let bills: Vec<String> = tree(&inbox.join("sorted/bills")).into_keys().collect();
    assert_eq!(bills, ["nested.pdf"], "{text}");
}

#[test]
fn the_report_can_go_to_a_file() {
    let o = corpus();
    let call = o.call(
        "pdf_categorizer",
        json!({"source_dir": "inbox", "ocr_fallback": false, "output_path": "reports/plan.json"}),
    );
    assert!(!call.is_error(), "{}", call.text());
    assert!(
        call.text().contains("/officer/user/reports/plan.json"),
        "{}",
        call.text()
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(o.home().join("reports/plan.json")).unwrap())
            .unwrap();
    assert_eq!(report["mode"], "dry_run");
    let acme = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "acme.pdf")
        .unwrap();
    assert_eq!(acme["category"], "invoice");
    assert!(
        acme["keywords"]
            .as_array()
            .unwrap()
            .contains(&json!("invoice number"))
    );
}
