//! The standard tool `gmail` (`seed/tools/gmail`), through `toolhost call` and `toolhost
//! mcp`, in the sandbox, against a loopback fake of the Gmail REST API v1 and Google's
//! OAuth token endpoint that speaks their wire format (paths, query, Bearer auth, JSON
//! shapes, error bodies) and records what it was sent. The messages are made here:
//! multipart/alternative, HTML only, RFC 2047 encoded-word headers with an ISO-8859-1
//! body, nested multipart/mixed with a PDF attachment; two threads; two pages.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/fake_http.rs"]
mod fake_http;
#[path = "mcp/line_client.rs"]
mod line_client;
mod machine;
#[path = "mcp/standard.rs"]
mod standard;

use std::collections::BTreeMap;

use fake_http::{Answer, FakeServer, Request, base64, base64url};
use serde_json::{Value, json};
use standard::{Officer, text_of};

const PDF: &[u8] = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n\x00\xff\x01trailer\n%%EOF\n";
const SUBJECT_KOELN: &str = "Grüße aus Köln ☕";

fn headers(list: &[(&str, &str)]) -> Value {
    Value::Array(
        list.iter()
            .map(|(k, v)| json!({"name": k, "value": v}))
            .collect(),
    )
}

/// A leaf part with its body inline (base64url, as Gmail sends it).
fn leaf(part_id: &str, mime: &str, content_type: &str, data: &[u8]) -> Value {
    json!({"partId": part_id, "mimeType": mime, "filename": "",
           "headers": headers(&[("Content-Type", content_type)]),
           "body": {"size": data.len(), "data": base64url(data)}})
}

fn multipart(part_id: &str, mime: &str, parts: Vec<Value>) -> Value {
    json!({"partId": part_id, "mimeType": mime, "filename": "",
           "headers": headers(&[("Content-Type", &format!("{mime}; boundary=\"b{part_id}\""))]),
           "body": {"size": 0}, "parts": parts})
}

fn message(
    id: &str,
    thread: &str,
    date_ms: u64,
    top: &[(&str, &str)],
    mut payload: Value,
) -> Value {
    let mut all = headers(top).as_array().unwrap().clone();
    all.extend(payload["headers"].as_array().unwrap().iter().cloned());
    payload["headers"] = Value::Array(all);
    json!({"id": id, "threadId": thread, "labelIds": ["INBOX", "UNREAD"],
           "snippet": format!("snippet of {id} &amp; more"), "historyId": "4242",
           "internalDate": date_ms.to_string(), "sizeEstimate": 2048, "payload": payload})
}

/// The mailbox, newest first.
fn mailbox() -> Vec<Value> {
    let latin1: Vec<u8> = "Schöne Grüße aus Köln,\r\nJörg"
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect();
    let encoded_subject = format!("=?UTF-8?B?{}?=", base64(SUBJECT_KOELN.as_bytes()));
    vec![
        message(
            "msg-mixed",
            "thread-koeln",
            1_772_500_000_000,
            &[
                ("From", "=?ISO-8859-1?Q?J=F6rg_M=FCller?= <joerg@example.de>"),
                ("To", "me@example.com"),
                ("Subject", &format!("Re: {encoded_subject}")),
                ("Date", "Tue, 3 Mar 2026 02:06:40 +0100"),
            ],
            multipart(
                "",
                "multipart/mixed",
                vec![
                    multipart(
                        "0",
                        "multipart/alternative",
                        vec![
                            leaf("0.0", "text/plain", "text/plain; charset=UTF-8", "Die Rechnung ist im Anhang.\r\n".as_bytes()),
                            leaf("0.1", "text/html", "text/html; charset=UTF-8", b"<div>Die <b>Rechnung</b> ist im Anhang.</div>"),
                        ],
                    ),
                    json!({"partId": "1", "mimeType": "application/pdf", "filename": "Rechnung März.pdf",
                           "headers": headers(&[("Content-Type", "application/pdf; name=\"Rechnung März.pdf\""),
                                                ("Content-Disposition", "attachment; filename=\"Rechnung März.pdf\""),
                                                ("Content-Transfer-Encoding", "base64")]),
                           "body": {"attachmentId": "ANGjdJ-att_pdf1", "size": PDF.len()}}),
                ],
            ),
        ),
        message(
            "msg-enc",
            "thread-koeln",
            1_772_400_000_000,
            &[
                ("From", "=?ISO-8859-1?Q?J=F6rg_M=FCller?= <joerg@example.de>"),
                ("To", "me@example.com"),
                ("Subject", &encoded_subject),
            ],
            leaf("", "text/plain", "text/plain; charset=\"iso-8859-1\"", &latin1),
        ),
        message(
            "msg-html",
            "thread-report",
            1_772_300_000_000,
            &[
                ("From", "Bob <bob@example.com>"),
                ("To", "me@example.com"),
                ("Subject", "Re: Quarterly report"),
            ],
            leaf(
                "",
                "text/html",
                "text/html; charset=utf-8",
                b"<html><head><style>p{color:red}</style></head><body><p>Thanks &amp; regards,</p>\
                  <ul><li>one</li><li>two</li></ul><a href=\"https://example.com/r\">the report</a></body></html>",
            ),
        ),
        message(
            "msg-alt",
            "thread-report",
            1_772_200_000_000,
            &[
                ("From", "Alice Example <alice@example.com>"),
                ("To", "me@example.com"),
                ("Cc", "bob@example.com"),
                ("Subject", "Quarterly report"),
                ("Date", "Fri, 27 Feb 2026 14:40:00 +0100"),
            ],
            multipart(
                "",
                "multipart/alternative",
                vec![
                    leaf("0", "text/plain", "text/plain; charset=utf-8", b"Hello,\r\nthe numbers are in.\r\n-- Alice"),
                    leaf("1", "text/html", "text/html; charset=utf-8", b"<p>Hello,</p><p>the <b>HTML</b> numbers are in.</p>"),
                ],
            ),
        ),
    ]
}

fn google_error(code: u16, status: &str, reason: &str, message: &str) -> Answer {
    Answer::json(
        code,
        &json!({"error": {"code": code, "message": message,
                "errors": [{"message": message, "domain": "global", "reason": reason}],
                "status": status}}),
    )
}

fn not_found() -> Answer {
    google_error(
        404,
        "NOT_FOUND",
        "notFound",
        "Requested entity was not found.",
    )
}

/// Only the headers of a message, as `format=metadata` gives them.
fn metadata(m: &Value, wanted: &[&str]) -> Value {
    let mut m = m.clone();
    let hs: Vec<Value> = m["payload"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| wanted.is_empty() || wanted.contains(&h["name"].as_str().unwrap()))
        .cloned()
        .collect();
    m["payload"] = json!({"partId": "", "mimeType": m["payload"]["mimeType"], "filename": "",
                          "headers": hs, "body": {"size": 0}});
    m
}

fn gmail_api(r: &Request) -> Answer {
    if r.method == "POST" && r.path == "/token" {
        let form = r.form();
        if form.get("grant_type").map(String::as_str) == Some("refresh_token")
            && form.get("refresh_token").map(String::as_str) == Some("good-refresh")
            && form.get("client_id").map(String::as_str) == Some("cid.apps.googleusercontent.com")
            && form.get("client_secret").map(String::as_str) == Some("csecret")
        {
            return Answer::json(
                200,
                &json!({"access_token": "fresh-token", "expires_in": 3599,
                        "scope": "https://www.googleapis.com/auth/gmail.readonly", "token_type": "Bearer"}),
            );
        }
        return Answer::json(
            400,
            &json!({"error": "invalid_grant", "error_description": "Token has been expired or revoked."}),
        );
    }
    match r.header("authorization") {
        Some("Bearer good-token" | "Bearer fresh-token") => {}
        Some("Bearer noscope-token") => {
            return google_error(
                403,
                "PERMISSION_DENIED",
                "insufficientPermissions",
                "Request had insufficient authentication scopes.",
            );
        }
        _ => {
            return google_error(
                401,
                "UNAUTHENTICATED",
                "authError",
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
            );
        }
    }
    let Some(rest) = r.path.strip_prefix("/gmail/v1/users/me/") else {
        return not_found();
    };
    let mail = mailbox();
    let find = |id: &str| mail.iter().find(|m| m["id"] == id).cloned();
    let segments: Vec<&str> = rest.split('/').collect();
    match segments.as_slice() {
        ["messages"] => {
            if r.param("q").is_some_and(|q| q.contains("from:nobody")) {
                return Answer::json(200, &json!({"resultSizeEstimate": 0}));
            }
            let max: usize = r.param("maxResults").unwrap_or("100").parse().unwrap();
            let offset: usize = r
                .param("pageToken")
                .map_or(0, |t| t.trim_start_matches("tok").parse().unwrap());
            let page: Vec<Value> = mail
                .iter()
                .skip(offset)
                .take(max)
                .map(|m| json!({"id": m["id"], "threadId": m["threadId"]}))
                .collect();
            let mut answer = json!({"messages": page, "resultSizeEstimate": mail.len()});
            if offset + max < mail.len() {
                answer["nextPageToken"] = json!(format!("tok{}", offset + max));
            }
            Answer::json(200, &answer)
        }
        ["messages", id] => match find(id) {
            None => not_found(),
            Some(m) => match r.param("format").unwrap_or("full") {
                "metadata" => Answer::json(200, &metadata(&m, &r.params("metadataHeaders"))),
                "raw" => {
                    let mut m = metadata(&m, &[]);
                    m.as_object_mut().unwrap().remove("payload");
                    m["raw"] = json!(base64url(
                        b"From: Alice Example <alice@example.com>\r\nSubject: Quarterly report\r\n\r\nHello,\r\n"
                    ));
                    Answer::json(200, &m)
                }
                _ => Answer::json(200, &m),
            },
        },
        ["messages", id, "attachments", aid] => {
            if find(id).is_some() && *aid == "ANGjdJ-att_pdf1" {
                Answer::json(200, &json!({"size": PDF.len(), "data": base64url(PDF)}))
            } else {
                not_found()
            }
        }
        ["threads", id] => {
            let mut messages: Vec<Value> = mail
                .iter()
                .filter(|m| m["threadId"] == *id)
                .cloned()
                .collect();
            if messages.is_empty() {
                return not_found();
            }
            messages.reverse();
            if r.param("format") == Some("metadata") {
                messages = messages.iter().map(|m| metadata(m, &[])).collect();
            }
            Answer::json(
                200,
                &json!({"id": id, "historyId": "4242", "messages": messages}),
            )
        }
        ["labels"] => Answer::json(
            200,
            &json!({"labels": [
                {"id": "INBOX", "name": "INBOX", "messageListVisibility": "hide", "labelListVisibility": "labelShow", "type": "system"},
                {"id": "UNREAD", "name": "UNREAD", "type": "system"},
                {"id": "Label_1", "name": "Receipts", "messageListVisibility": "show", "labelListVisibility": "labelShow", "type": "user"}
            ]}),
        ),
        _ => not_found(),
    }
}

fn config(base: &str, gmail: &str) -> String {
    format!(
        "[sandbox]\nnetwork_private = [\"127.0.0.1/32\"]\nnetwork_ports = []\n\n\
         [resources.gmail]\napiBaseUrl = \"{base}\"\ntokenUrl = \"{base}/token\"\n{gmail}"
    )
}

fn gmail_requests(fake: &FakeServer) -> Vec<Request> {
    fake.requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/gmail/"))
        .collect()
}

#[test]
fn lists_pages_reads_mime_and_saves_attachments() {
    let fake = FakeServer::start(gmail_api);
    let o = Officer::new(&config(&fake.base, "accessToken = \"good-token\"\n"));

    // Page 1 of 2: the search and label filter are sent as Gmail takes them; each listed
    // message's headers come from format=metadata.
    let text = o.ok(
        "gmail",
        json!({"action": "list_messages", "query": "has:attachment newer_than:30d",
               "label_ids": "INBOX, UNREAD", "max_results": 3}),
    );
    assert!(
        text.starts_with("3 messages matching \"has:attachment newer_than:30d\" (about 4 in all):"),
        "{text}"
    );
    assert!(text.contains("1. id: msg-mixed thread: thread-koeln | 2026-03-03T01:06:40Z | Jörg Müller <joerg@example.de> | Re: Grüße aus Köln ☕ [INBOX, UNREAD]"), "{text}");
    assert!(text.contains("snippet of msg-mixed & more"), "{text}");
    assert!(
        text.contains("3. id: msg-html thread: thread-report"),
        "{text}"
    );
    assert!(!text.contains("msg-alt"), "{text}");
    assert!(text.contains("nextPageToken: tok3"), "{text}");
    let requests = gmail_requests(&fake);
    let lists: Vec<&Request> = requests
        .iter()
        .filter(|r| r.path == "/gmail/v1/users/me/messages")
        .collect();
    assert_eq!(lists.len(), 2, "one per transport: {requests:?}");
    for r in &lists {
        assert_eq!(r.method, "GET");
        assert_eq!(r.header("authorization"), Some("Bearer good-token"));
        assert_eq!(r.param("q"), Some("has:attachment newer_than:30d"));
        assert_eq!(r.params("labelIds"), ["INBOX", "UNREAD"]);
        assert_eq!(r.param("maxResults"), Some("3"));
        assert_eq!(r.param("pageToken"), None);
        assert_eq!(r.param("includeSpamTrash"), None);
    }
    let meta: Vec<&Request> = requests
        .iter()
        .filter(|r| r.path == "/gmail/v1/users/me/messages/msg-enc")
        .collect();
    assert_eq!(meta.len(), 2);
    assert_eq!(meta[0].param("format"), Some("metadata"));
    assert_eq!(
        meta[0].params("metadataHeaders"),
        ["From", "Subject", "Date"]
    );

    // Page 2: the token is passed back; the last page says so.
    fake.clear();
    let text = o.ok("gmail",
        json!({"action": "list_messages", "max_results": 3, "page_token": "tok3", "include_spam_trash": true}),
    );
    assert!(text.starts_with("1 message in the mailbox"), "{text}");
    assert!(text.contains("1. id: msg-alt thread: thread-report | 2026-02-27T13:46:40Z | Alice Example <alice@example.com> | Quarterly report"), "{text}");
    assert!(text.ends_with("No more pages."), "{text}");
    let r = &gmail_requests(&fake)[0];
    assert_eq!(
        (r.param("pageToken"), r.param("includeSpamTrash")),
        (Some("tok3"), Some("true"))
    );
    assert_eq!(r.param("q"), None);
    let text = o.ok(
        "gmail",
        json!({"action": "list_messages", "query": "from:nobody"}),
    );
    assert_eq!(text, "No messages matching \"from:nobody\".");

    // multipart/alternative: the plain part, not the HTML one.
    fake.clear();
    let text = o.ok(
        "gmail",
        json!({"action": "get_message", "message_id": "msg-alt"}),
    );
    assert!(text.starts_with("Message msg-alt (thread thread-report)\nFrom: Alice Example <alice@example.com>\nTo: me@example.com\nCc: bob@example.com\nDate: Fri, 27 Feb 2026 14:40:00 +0100\nSubject: Quarterly report\nLabels: INBOX, UNREAD"), "{text}");
    assert!(
        text.ends_with("--- body (text/plain) ---\nHello,\nthe numbers are in.\n-- Alice"),
        "{text}"
    );
    assert!(
        !text.contains("HTML") && !text.contains("Attachments"),
        "{text}"
    );
    let r = &gmail_requests(&fake)[0];
    assert_eq!(r.path, "/gmail/v1/users/me/messages/msg-alt");
    assert_eq!(r.param("format"), Some("full"));
    assert_eq!(r.header("authorization"), Some("Bearer good-token"));

    // HTML only: turned into text.
    let text = o.ok(
        "gmail",
        json!({"action": "get_message", "message_id": "msg-html"}),
    );
    assert!(
        text.contains("--- body (text/html, as text) ---\nThanks & regards,\n"),
        "{text}"
    );
    assert!(text.contains("- one\n- two"), "{text}");
    assert!(
        text.contains("the report (https://example.com/r)"),
        "{text}"
    );
    let body = text.split("--- body").nth(1).unwrap();
    assert!(!body.contains('<') && !body.contains("color:red"), "{text}");

    // Encoded words (B and Q, UTF-8 and ISO-8859-1) and an ISO-8859-1 body.
    let text = o.ok(
        "gmail",
        json!({"action": "get_message", "message_id": "msg-enc"}),
    );
    assert!(
        text.contains("From: Jörg Müller <joerg@example.de>"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Subject: {SUBJECT_KOELN}\n")),
        "{text}"
    );
    assert!(text.ends_with("Schöne Grüße aus Köln,\nJörg"), "{text}");

    // Nested multipart/mixed: the alternative's plain text and the attachment listed.
    let text = o.ok(
        "gmail",
        json!({"action": "get_message", "message_id": "msg-mixed"}),
    );
    assert!(text.contains("Attachments (1):\n  - Rechnung März.pdf (application/pdf, 68 bytes) attachment_id: ANGjdJ-att_pdf1"), "{text}");
    assert!(
        text.ends_with("--- body (text/plain) ---\nDie Rechnung ist im Anhang."),
        "{text}"
    );

    // metadata and raw.
    let text = o.ok(
        "gmail",
        json!({"action": "get_message", "message_id": "msg-alt", "format": "metadata"}),
    );
    assert!(
        text.contains("Subject: Quarterly report")
            && text.contains("Snippet: snippet of msg-alt & more"),
        "{text}"
    );
    assert!(!text.contains("body"), "{text}");
    let text = o.ok(
        "gmail",
        json!({"action": "get_message", "message_id": "msg-alt", "format": "raw"}),
    );
    assert_eq!(
        text,
        "From: Alice Example <alice@example.com>\r\nSubject: Quarterly report\r\n\r\nHello,\r\n"
    );

    // Two threads, oldest message first.
    fake.clear();
    let text = o.ok(
        "gmail",
        json!({"action": "get_thread", "thread_id": "thread-report"}),
    );
    assert!(
        text.starts_with("Thread thread-report: 2 messages, \"Quarterly report\""),
        "{text}"
    );
    let first = text.find("===== 1 of 2 =====\nMessage msg-alt").unwrap();
    let second = text.find("===== 2 of 2 =====\nMessage msg-html").unwrap();
    assert!(first < second, "{text}");
    assert!(
        text.contains("the numbers are in.") && text.contains("Thanks & regards"),
        "{text}"
    );
    assert_eq!(
        gmail_requests(&fake)[0].path,
        "/gmail/v1/users/me/threads/thread-report"
    );
    assert_eq!(gmail_requests(&fake)[0].param("format"), Some("full"));
    let text = o.ok(
        "gmail",
        json!({"action": "get_thread", "thread_id": "thread-koeln"}),
    );
    assert!(
        text.starts_with(&format!(
            "Thread thread-koeln: 2 messages, \"{SUBJECT_KOELN}\""
        )),
        "{text}"
    );
    assert!(text.contains("Rechnung März.pdf"), "{text}");

    let text = o.ok("gmail", json!({"action": "list_labels"}));
    assert!(
        text.contains("System labels:\n- INBOX (id: INBOX)\n- UNREAD (id: UNREAD)"),
        "{text}"
    );
    assert!(
        text.contains("User labels:\n- Receipts (id: Label_1)"),
        "{text}"
    );

    // Long output to a file in the home.
    let text = o.ok("gmail",
        json!({"action": "get_thread", "thread_id": "thread-report", "output_path": "mail/report.txt"}),
    );
    assert!(
        text.contains("saved to /officer/user/mail/report.txt"),
        "{text}"
    );
    let saved = std::fs::read_to_string(o.home().join("mail/report.txt")).unwrap();
    assert!(saved.contains("Thanks & regards"), "{saved}");

    // Attachments: saved under the home, bytes intact, never overwriting.
    fake.clear();
    let args = json!({"action": "get_attachment", "message_id": "msg-mixed", "attachment_id": "ANGjdJ-att_pdf1"});
    let call = o.call("gmail", args.clone());
    assert!(!call.is_error(), "{}", call.text());
    assert_eq!(
        call.text(),
        "Saved \"Rechnung März.pdf\" (application/pdf, 68 bytes) to /officer/user/gmail-attachments/Rechnung März.pdf"
    );
    let dir = o.home().join("gmail-attachments");
    assert_eq!(std::fs::read(dir.join("Rechnung März.pdf")).unwrap(), PDF);
    let r = gmail_requests(&fake);
    assert_eq!(
        r.last().unwrap().path,
        "/gmail/v1/users/me/messages/msg-mixed/attachments/ANGjdJ-att_pdf1"
    );
    let mcp = o.mcp_call("gmail", args);
    assert!(mcp["isError"] != true, "{mcp}");
    assert!(
        text_of(&mcp).contains("to /officer/user/gmail-attachments/Rechnung März (2).pdf (/officer/user/gmail-attachments/Rechnung März.pdf already existed, so it was not overwritten)"),
        "{mcp}"
    );
    assert_eq!(
        std::fs::read(dir.join("Rechnung März (2).pdf")).unwrap(),
        PDF
    );
    let call = o.call(
        "gmail",
        json!({"action": "get_attachment", "message_id": "msg-mixed", "attachment_id": "ANGjdJ-att_pdf1", "output_path": "invoices/acme.pdf"}),
    );
    assert!(
        call.text().ends_with("to /officer/user/invoices/acme.pdf"),
        "{}",
        call.text()
    );
    assert_eq!(
        std::fs::read(o.home().join("invoices/acme.pdf")).unwrap(),
        PDF
    );

    // 404s and bad parameters.
    let text = o.fails(
        "gmail",
        json!({"action": "get_message", "message_id": "nope"}),
    );
    assert!(text.starts_with("No message with id nope (Gmail answered 404 NOT_FOUND, notFound: Requested entity was not found.)"), "{text}");
    let text = o.fails(
        "gmail",
        json!({"action": "get_thread", "thread_id": "nope"}),
    );
    assert!(text.starts_with("No thread with id nope"), "{text}");
    let text = o.fails(
        "gmail",
        json!({"action": "get_attachment", "message_id": "msg-mixed", "attachment_id": "gone"}),
    );
    assert!(
        text.starts_with("No attachment gone in message msg-mixed"),
        "{text}"
    );
    let text = o.fails("gmail", json!({"action": "get_message"}));
    assert!(text.contains("message_id is required"), "{text}");
    let text = o.fails(
        "gmail",
        json!({"action": "list_messages", "max_results": 501}),
    );
    assert!(
        text.contains("max_results must be a whole number from 1 to 500"),
        "{text}"
    );
}

#[test]
fn an_expired_token_is_refreshed_once_and_failures_say_what_to_do() {
    let fake = FakeServer::start(gmail_api);
    let creds = "refreshToken = \"good-refresh\"\nclientId = \"cid.apps.googleusercontent.com\"\nclientSecret = \"csecret\"\n";
    let o = Officer::new(&config(
        &fake.base,
        &format!("accessToken = \"stale-token\"\n{creds}"),
    ));

    // 401 → POST the refresh token form → the same request again with the new token.
    let call = o.call("gmail", json!({"action": "list_labels"}));
    assert!(!call.is_error(), "{}", call.text());
    assert!(call.text().contains("Receipts"), "{}", call.text());
    let requests = fake.requests();
    let seen: Vec<(String, String, Option<String>)> = requests
        .iter()
        .map(|r| {
            (
                r.method.clone(),
                r.path.clone(),
                r.header("authorization").map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "GET".into(),
                "/gmail/v1/users/me/labels".into(),
                Some("Bearer stale-token".into())
            ),
            ("POST".into(), "/token".into(), None),
            (
                "GET".into(),
                "/gmail/v1/users/me/labels".into(),
                Some("Bearer fresh-token".into())
            ),
        ]
    );
    assert_eq!(
        requests[1].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    let form: BTreeMap<String, String> = requests[1].form();
    assert_eq!(
        form,
        BTreeMap::from([
            ("grant_type".into(), "refresh_token".into()),
            ("refresh_token".into(), "good-refresh".into()),
            ("client_id".into(), "cid.apps.googleusercontent.com".into()),
            ("client_secret".into(), "csecret".into()),
        ])
    );
    // The same through MCP; and with only a refresh token, one is fetched first.
    assert!(o.mcp_call("gmail", json!({"action": "list_labels"}))["isError"] != true);
    std::fs::write(o.config(), config(&fake.base, creds)).unwrap();
    fake.clear();
    let text = o.ok(
        "gmail",
        json!({"action": "get_message", "message_id": "msg-alt"}),
    );
    assert!(text.contains("the numbers are in."), "{text}");
    let paths: Vec<String> = fake.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths,
        [
            "/token",
            "/gmail/v1/users/me/messages/msg-alt",
            "/token",
            "/gmail/v1/users/me/messages/msg-alt"
        ]
    );

    // A revoked refresh token: one refresh attempt, then a message naming the fix.
    std::fs::write(
        o.config(),
        config(&fake.base, "accessToken = \"stale-token\"\nrefreshToken = \"revoked\"\nclientId = \"cid.apps.googleusercontent.com\"\nclientSecret = \"csecret\"\n"),
    )
    .unwrap();
    fake.clear();
    let text = o.fails("gmail", json!({"action": "list_labels"}));
    assert!(
        text.starts_with("Refreshing the Gmail access token failed (400 invalid_grant: Token has been expired or revoked.)"),
        "{text}"
    );
    assert!(
        text.contains("reconnect Gmail in Settings → Integrations"),
        "{text}"
    );
    assert_eq!(
        fake.requests()
            .iter()
            .filter(|r| r.path == "/token")
            .count(),
        2,
        "one per transport"
    );

    // No refresh token: the 401 is reported, with the fix.
    std::fs::write(
        o.config(),
        config(&fake.base, "accessToken = \"stale-token\"\n"),
    )
    .unwrap();
    let text = o.fails("gmail", json!({"action": "list_labels"}));
    assert!(
        text.starts_with("Gmail rejected the access token (401 UNAUTHENTICATED, authError:"),
        "{text}"
    );
    assert!(
        text.contains(
            "could not be refreshed (no refreshToken, clientId and clientSecret configured)"
        ),
        "{text}"
    );

    // access_token overrides the configuration and is never refreshed; a token without
    // the scope says so.
    std::fs::write(
        o.config(),
        config(
            &fake.base,
            &format!("accessToken = \"stale-token\"\n{creds}"),
        ),
    )
    .unwrap();
    fake.clear();
    let text = o.ok(
        "gmail",
        json!({"action": "list_labels", "access_token": "good-token"}),
    );
    assert!(text.contains("Receipts"), "{text}");
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer good-token"))
    );
    fake.clear();
    let text = o.fails(
        "gmail",
        json!({"action": "list_labels", "access_token": "expired-param-token"}),
    );
    assert!(
        text.starts_with("Gmail rejected the access_token passed (401"),
        "{text}"
    );
    assert!(fake.requests().iter().all(|r| r.path != "/token"));
    let text = o.fails(
        "gmail",
        json!({"action": "get_message", "message_id": "msg-alt", "access_token": "noscope-token"}),
    );
    assert!(
        text.contains("lacks the permission") && text.contains("gmail.readonly"),
        "{text}"
    );
    assert!(!text.contains("noscope-token"), "{text}");

    // Nothing configured.
    std::fs::write(o.config(), "").unwrap();
    let text = o.fails("gmail", json!({"action": "list_labels"}));
    assert!(text.starts_with("Gmail is not connected"), "{text}");
    assert!(text.contains("Settings → Integrations → Gmail"), "{text}");
}
