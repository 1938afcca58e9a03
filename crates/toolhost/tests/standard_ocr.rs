//! The standard tool `ocr` (`seed/tools/ocr`), through `toolhost call` and `toolhost mcp`,
//! in the sandbox, on documents made at run time: a rendered PNG and a scanned
//! (image-only) PDF read by tesseract, a text PDF read from its text layer, and the remote
//! path against a loopback fake of Mistral's `POST /v1/ocr` that records what it was sent.
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
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use standard::Officer;

const INVOICE: &[&str] = &["Invoice 2026-0042", "Total due 318.50 EUR", "Thank you"];

fn programs() {
    machine::program("tesseract", "tesseract-ocr");
    machine::program("pdftoppm", "poppler-utils");
    machine::program("pdftotext", "poppler-utils");
    machine::program("pdfinfo", "poppler-utils");
}

fn has_invoice_words(text: &str) {
    for word in ["Invoice", "2026-0042", "318.50", "EUR", "Thank"] {
        assert!(text.contains(word), "`{word}` was not read: {text}");
    }
}

#[test]
fn tesseract_reads_images_and_scans_and_pdfs_keep_their_text() {
    programs();
    let o = Officer::new("");
    let docs = o.home().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let text_pdf = docs.join("two-pages.pdf");
    std::fs::write(
        &text_pdf,
        pdf::text_pdf(&[INVOICE, &["Second page", "Payment terms 30 days"]]),
    )
    .unwrap();
    pdf::render_png(&text_pdf, 150, &docs.join("invoice.png"));
    std::fs::write(
        docs.join("scan.pdf"),
        pdf::scanned_pdf(INVOICE, 200, &o.dir.path().join("work")),
    )
    .unwrap();

    // An image: tesseract; the name says nothing, the contents do.
    std::fs::copy(docs.join("invoice.png"), docs.join("photo.dat")).unwrap();
    let text = o.ok("ocr", json!({"path": "docs/photo.dat"}));
    assert!(
        text.starts_with("/officer/user/docs/photo.dat: 1 page, local"),
        "{text}"
    );
    has_invoice_words(&text);
    let text = o.ok(
        "ocr",
        json!({"path": "/officer/user/docs/invoice.png", "format": "tsv"}),
    );
    assert!(text.contains("mean confidence: "), "{text}");
    assert!(text.contains("level\tpage_num"), "{text}");
    assert!(text.contains("\t318.50"), "{text}");

    // A scan: rasterised and read, with progress per page.
    let text = o.ok("ocr", json!({"path": "docs/scan.pdf"}));
    assert!(text.contains("--- page 1 (tesseract (eng)) ---"), "{text}");
    has_invoice_words(&text);
    let call = o.call("ocr", json!({"path": "docs/scan.pdf"}));
    assert!(
        call.stderr.contains("OCR with tesseract"),
        "no progress: {}",
        call.stderr
    );

    // A text PDF: the text layer, per page, and only the pages asked for.
    let text = o.ok("ocr", json!({"path": "docs/two-pages.pdf"}));
    assert!(text.contains("2 pages"), "{text}");
    assert!(text.contains("--- page 1 (text layer) ---"), "{text}");
    assert!(
        text.contains("--- page 2 (text layer) ---\nSecond page"),
        "{text}"
    );
    has_invoice_words(&text);
    let text = o.ok("ocr", json!({"path": "docs/two-pages.pdf", "pages": "2"}));
    assert!(
        text.contains("Payment terms") && !text.contains("Invoice"),
        "{text}"
    );

    // Large output to a file.
    let text = o.ok(
        "ocr",
        json!({"path": "docs/scan.pdf", "output_path": "out/scan.txt"}),
    );
    assert!(
        text.contains("saved to /officer/user/out/scan.txt"),
        "{text}"
    );
    has_invoice_words(&std::fs::read_to_string(o.home().join("out/scan.txt")).unwrap());

    // Failures the model can act on.
    let text = o.fails("ocr", json!({"path": "docs/nope.png"}));
    assert!(
        text.contains("No such file: /officer/user/docs/nope.png"),
        "{text}"
    );
    std::fs::write(docs.join("notes.txt"), "just text").unwrap();
    let text = o.fails("ocr", json!({"path": "docs/notes.txt"}));
    assert!(
        text.contains("not a supported file") && text.contains("PNG"),
        "{text}"
    );
    let text = o.fails(
        "ocr",
        json!({"path": "docs/invoice.png", "language": "xyz"}),
    );
    assert!(
        text.contains("install the Debian package(s) tesseract-ocr-xyz"),
        "{text}"
    );
    std::fs::write(docs.join("broken.pdf"), "%PDF-1.4\nnot really a pdf").unwrap();
    let text = o.fails("ocr", json!({"path": "docs/broken.pdf"}));
    assert!(text.contains("not a readable PDF"), "{text}");
    let text = o.fails("ocr", json!({"path": "docs/two-pages.pdf", "pages": "5"}));
    assert!(text.contains("outside the document's pages 1-2"), "{text}");
    let text = o.fails(
        "ocr",
        json!({"path": "docs/invoice.png", "provider": "remote"}),
    );
    assert!(
        text.contains("No remote OCR service is configured"),
        "{text}"
    );
}

/// One request the fake received.
#[derive(Debug, Clone)]
struct Request {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: Value,
}

/// A loopback fake of Mistral's OCR API: `POST /v1/ocr`, answering 401 to the key
/// `bad-key`, else one page of Markdown per requested page (`pages`, default [0]).
fn fake_mistral() -> (String, Arc<Mutex<Vec<Request>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() || line.is_empty() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let method = parts.next().unwrap_or_default().to_string();
            let path = parts.next().unwrap_or_default().to_string();
            let mut headers = BTreeMap::new();
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                }
            }
            let len: usize = headers
                .get("content-length")
                .and_then(|l| l.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (status, answer) = if headers.get("authorization").map(String::as_str)
                == Some("Bearer bad-key")
            {
                (
                    "401 Unauthorized",
                    json!({"message": "Unauthorized", "request_id": "x"}),
                )
            } else {
                let pages: Vec<u64> = body["pages"]
                    .as_array()
                    .map(|p| p.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_else(|| vec![0]);
                let pages: Vec<Value> = pages
                    .iter()
                    .map(|i| {
                        json!({"index": i, "markdown": format!("# Remote page {i}\n\nRead by the fake service."),
                               "images": [], "dimensions": {"dpi": 200, "height": 2200, "width": 1700}})
                    })
                    .collect();
                (
                    "200 OK",
                    json!({"pages": pages, "model": body["model"],
                           "usage_info": {"pages_processed": pages.len(), "doc_size_bytes": len}}),
                )
            };
            log.lock().unwrap().push(Request {
                method,
                path,
                headers,
                body,
            });
            let answer = answer.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (base, seen)
}

#[test]
fn the_remote_service_gets_the_document_as_a_data_url() {
    programs();
    let (base, seen) = fake_mistral();
    let o = Officer::new(&format!(
        "[sandbox]\nnetwork_private = [\"127.0.0.1/32\"]\nnetwork_ports = []\n\n\
         [resources.optical-character-recognition]\nprovider = \"mistral\"\n\
         apiKey = \"test-key-123\"\nbaseUrl = \"{base}\"\nmodel = \"mistral-ocr-2505\"\n"
    ));
    let docs = o.home().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let text_pdf = docs.join("doc.pdf");
    std::fs::write(&text_pdf, pdf::text_pdf(&[INVOICE, &["Page two"]])).unwrap();
    pdf::render_png(&text_pdf, 100, &docs.join("page.png"));

    // An image, through call and mcp.
    let text = o.ok("ocr", json!({"path": "docs/page.png"}));
    assert!(
        text.starts_with("/officer/user/docs/page.png: 1 page, remote service (mistral-ocr-2505)"),
        "{text}"
    );
    assert!(
        text.contains("# Remote page 0\n\nRead by the fake service."),
        "{text}"
    );
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let png = std::fs::read(docs.join("page.png")).unwrap();
    for r in &requests {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v1/ocr"));
        assert_eq!(r.headers["authorization"], "Bearer test-key-123");
        assert!(r.headers["content-type"].starts_with("application/json"));
        assert_eq!(r.body["model"], "mistral-ocr-2505");
        assert_eq!(r.body["document"]["type"], "image_url");
        assert_eq!(
            r.body["document"]["image_url"],
            format!("data:image/png;base64,{}", pdf::base64(&png))
        );
        assert!(r.body.get("pages").is_none(), "{}", r.body);
    }

    // A PDF, only its second page: a document URL, pages counted from 0.
    seen.lock().unwrap().clear();
    let call = o.call("ocr", json!({"path": "docs/doc.pdf", "pages": "2"}));
    assert!(!call.is_error(), "{}", call.text());
    assert!(
        call.text()
            .contains("--- page 2 (remote (mistral-ocr-2505)) ---\n# Remote page 1"),
        "{}",
        call.text()
    );
    let r = seen.lock().unwrap()[0].clone();
    assert_eq!(r.body["document"]["type"], "document_url");
    assert_eq!(
        r.body["document"]["document_url"],
        format!(
            "data:application/pdf;base64,{}",
            pdf::base64(&std::fs::read(&text_pdf).unwrap())
        )
    );
    assert_eq!(r.body["pages"], json!([1]));

    // The api_key parameter wins, and a rejected key says what to do; the key itself is
    // never shown (sensitive).
    let text = o.fails(
        "ocr",
        json!({"path": "docs/page.png", "api_key": "bad-key"}),
    );
    assert!(
        text.contains("answered 401") && text.contains("Settings → Integrations"),
        "{text}"
    );
    assert_eq!(
        seen.lock().unwrap().last().unwrap().headers["authorization"],
        "Bearer bad-key"
    );

    // provider=tesseract stays local: nothing is sent.
    seen.lock().unwrap().clear();
    let text = o.ok(
        "ocr",
        json!({"path": "docs/page.png", "provider": "tesseract"}),
    );
    assert!(text.contains("local") && text.contains("Invoice"), "{text}");
    assert!(seen.lock().unwrap().is_empty());
}
