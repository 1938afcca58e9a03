//! The standard tool `email_db` (`seed/tools/email_db`) over a mail store built at run time
//! from its own `schema.sql` (unicode, a thread with a reply, labels, an attachment, an
//! HTML-only and a deleted message), through `toolhost call` and `toolhost mcp`, in the
//! sandbox, where the database's directory is `/officer/data`: search folds accents,
//! `LIMIT` is wrapped and CTEs work, and writes, extra statements, `ATTACH` and file
//! functions are refused by SQLite itself.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;
mod machine;
#[path = "mcp/standard.rs"]
mod standard;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use standard::Officer;

const MAIL: &str = r#"
INSERT INTO accounts (id, email, provider, display_name) VALUES (1, 'ada@example.com', 'gmail', 'Ada');
INSERT INTO labels (id, account_id, provider_label_id, name, type) VALUES
  (1, 1, 'INBOX', 'INBOX', 'system'), (2, 1, 'Label_7', 'Receipts', 'user');
INSERT INTO messages (id, account_id, provider_id, thread_id, rfc822_message_id, in_reply_to,
  subject, snippet, from_name, from_email, to_json, sent_at, internal_date_ms, body_text,
  body_html, is_read, is_outgoing, is_deleted, has_attachments, synced_at) VALUES
 (1, 1, 'g1', 't-cafe', '<m1@example.com>', NULL, 'Café façade renovation', 'The façade…',
  'Bob Martin', 'bob@example.com', '[{"name":"Ada","email":"ada@example.com"}]',
  '2026-01-05T09:00:00Z', 1767603600000, 'The façade of the café needs work. Quote attached.',
  NULL, 0, 0, 0, 1, '2026-01-06T00:00:00Z'),
 (2, 1, 'g2', 't-cafe', '<m2@example.com>', '<m1@example.com>', 'Re: Café façade renovation',
  'Thanks Bob', 'Ada', 'ada@example.com', '[{"name":"Bob Martin","email":"bob@example.com"}]',
  '2026-01-05T10:30:00Z', 1767609000000, 'Thanks Bob, let us go ahead.', NULL, 1, 1, 0, 0,
  '2026-01-06T00:00:00Z'),
 (3, 1, 'g3', 't-acme', NULL, NULL, 'Invoice 2026-0042 from ACME', 'Invoice total',
  'ACME Billing', 'billing@acme.example', '[]', '2026-01-10T08:00:00Z', 1768032000000,
  'Invoice total 318.50 EUR, due 2026-02-10.', NULL, 1, 0, 0, 0, '2026-01-11T00:00:00Z'),
 (4, 1, 'g4', 't-jp', NULL, NULL, '会議の件', '来週の会議', '山田太郎', 'yamada@example.jp', '[]',
  '2026-01-12T01:00:00Z', 1768179600000, '来週の会議について', NULL, 0, 0, 0, 0,
  '2026-01-12T02:00:00Z'),
 (5, 1, 'g5', 't-spam', NULL, NULL, 'Café façade deals', 'spam', 'Spammer', 'spam@example.net',
  '[]', '2026-01-13T00:00:00Z', 1768262400000, 'Cheap façade paint at the café', NULL, 0, 0, 1,
  0, '2026-01-13T01:00:00Z'),
 (6, 1, 'g6', 't-news', NULL, NULL, 'Weekly newsletter', 'Newsletter', 'News', 'news@example.org',
  '[]', '2026-01-14T00:00:00Z', 1768348800000, NULL, '<html><head><style>p {}</style></head><p>Newsletter &amp; more</p></html>', 0, 0, 0, 0,
  '2026-01-14T01:00:00Z');
INSERT INTO message_labels (message_id, label_id) VALUES (1, 1), (3, 1), (3, 2);
INSERT INTO attachments (message_id, filename, mime_type, size_bytes) VALUES
  (1, 'quote.pdf', 'application/pdf', 48213);
"#;

fn tool_dir() -> PathBuf {
    standard::seed().join("email_db")
}

/// `sqlite3 DB` fed `sql` on stdin; panics on failure.
fn sqlite(db: &Path, sql: &str) -> String {
    machine::program("sqlite3", "sqlite3");
    let mut child = Command::new("sqlite3")
        .arg("-bail")
        .arg(db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(sql.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "sqlite3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// An Officer whose `OFFICER_EMAIL_DB` is `DIR/mail/emails.db` (a directory of its own,
/// beside the data folder), created from the tool's `create-db.sh` and filled when `fill`.
fn officer(fill: bool) -> (Officer, PathBuf) {
    machine::program("sqlite3", "sqlite3");
    let o = Officer::new("");
    // A directory of its own beside the data folder, as the runtime requires.
    let mail = o.dir.path().join("mail");
    std::fs::create_dir(&mail).unwrap();
    let db = mail.join("emails.db");
    std::fs::write(
        o.config(),
        format!("[env]\nOFFICER_EMAIL_DB = {:?}\n", db.display().to_string()),
    )
    .unwrap();
    if fill {
        let out = Command::new(tool_dir().join("create-db.sh"))
            .arg(&db)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "create-db.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        sqlite(&db, MAIL);
    }
    (o, db)
}

#[test]
fn search_thread_stats_and_schema() {
    let (o, _db) = officer(true);

    // Accents folded by the FTS5 tokenizer; the deleted message is left out.
    let text = o.ok(
        "email_db",
        json!({"action": "search", "text": "cafe AND facade"}),
    );
    assert!(text.starts_with("2 matching messages"), "{text}");
    assert!(text.contains("subject: Café façade renovation"), "{text}");
    assert!(
        text.contains("subject: Re: Café façade renovation"),
        "{text}"
    );
    assert!(text.contains("match: [Café] [façade] renovation"), "{text}");
    assert!(!text.contains("deals"), "deleted mail was found: {text}");
    // A column filter and a bad FTS query.
    let text = o.ok(
        "email_db",
        json!({"action": "search", "text": "from_email:acme"}),
    );
    assert!(text.contains("Invoice 2026-0042"), "{text}");
    let text = o.fails(
        "email_db",
        json!({"action": "search", "text": "acme-corp AND"}),
    );
    assert!(text.contains("FTS5 query"), "{text}");

    let text = o.ok(
        "email_db",
        json!({"action": "thread", "thread_id": "t-cafe"}),
    );
    let first = text.find("Bob Martin <bob@example.com>").unwrap();
    let reply = text.find("Thanks Bob, let us go ahead.").unwrap();
    assert!(first < reply, "oldest first: {text}");
    assert!(
        text.contains("Attachments: quote.pdf (application/pdf, 48213 bytes)"),
        "{text}"
    );
    assert!(text.contains("Labels: INBOX"), "{text}");
    assert!(text.contains("To: Ada <ada@example.com>"), "{text}");
    assert!(text.contains("2 messages"), "{text}");
    // An HTML-only message reads as text.
    let text = o.ok(
        "email_db",
        json!({"action": "thread", "thread_id": "t-news"}),
    );
    assert!(text.ends_with("\n\nNewsletter & more"), "{text}");
    let text = o.fails("email_db", json!({"action": "thread", "thread_id": "nope"}));
    assert!(text.contains("No messages in thread nope"), "{text}");

    let text = o.ok("email_db", json!({"action": "stats"}));
    assert!(text.contains("  messages: 6"), "{text}");
    assert!(
        text.contains("Messages: 6 (3 unread, 1 sent by the user, 1 deleted), 5 threads"),
        "{text}"
    );
    assert!(
        text.contains("ada@example.com (gmail): 6 messages"),
        "{text}"
    );
    assert!(text.contains("Receipts: 1"), "{text}");
    assert!(
        text.contains("2026-01-05T09:00:00Z … 2026-01-14T00:00:00Z"),
        "{text}"
    );

    let text = o.ok("email_db", json!({"action": "schema"}));
    assert!(
        text.contains("CREATE VIRTUAL TABLE messages_fts USING fts5"),
        "{text}"
    );
    assert!(text.contains("CREATE VIEW threads"), "{text}");
}

#[test]
fn queries_are_wrapped_and_read_only() {
    let (o, db) = officer(true);

    // A CTE; unicode comes back intact.
    let text = o.ok(
        "email_db",
        json!({"action": "query", "sql": "WITH n AS (SELECT thread_id, COUNT(*) AS c FROM messages \
               WHERE is_deleted = 0 GROUP BY thread_id) SELECT thread_id, c FROM n WHERE c > 1"}),
    );
    assert_eq!(text, "1 rows:\n\n1. thread_id: t-cafe | c: 2");
    let text = o.ok(
        "email_db",
        json!({"action": "query", "sql": "SELECT from_name, subject FROM messages WHERE id = 4;"}),
    );
    assert!(
        text.contains("from_name: 山田太郎 | subject: 会議の件"),
        "{text}"
    );

    // The tool's limit wraps the SQL; the SQL's own LIMIT and ORDER BY stand.
    let text = o.ok("email_db",
        json!({"action": "query", "sql": "SELECT id FROM messages ORDER BY id DESC LIMIT 4", "limit": 2}),
    );
    assert!(text.starts_with("2 rows (the limit, 2"), "{text}");
    assert!(text.ends_with("1. id: 6\n2. id: 5"), "{text}");
    let text = o.ok(
        "email_db",
        json!({"action": "query", "sql": "SELECT id FROM messages ORDER BY id LIMIT 1 -- first"}),
    );
    assert_eq!(text, "1 rows:\n\n1. id: 1");
    // Something that is not a SELECT still runs, as SQLite parses it.
    let text = o.ok(
        "email_db",
        json!({"action": "query", "sql": "PRAGMA table_info(labels)"}),
    );
    assert!(text.contains("name: provider_label_id"), "{text}");

    // Writes: refused by the database (read-only, error 8), whether plain or smuggled
    // behind the wrapper's parenthesis.
    for sql in [
        "DELETE FROM messages",
        "UPDATE messages SET is_read = 1",
        "SELECT 1) ; DELETE FROM messages; SELECT * FROM (SELECT 1",
        "CREATE TABLE x (a)",
        "PRAGMA user_version = 7",
    ] {
        let text = o.fails("email_db", json!({"action": "query", "sql": sql}));
        assert!(
            text.contains("attempt to write a readonly database (8)"),
            "{sql}: {text}"
        );
    }
    let text = o.fails(
        "email_db",
        json!({"action": "query", "sql": "CREATE TEMP TABLE x AS SELECT 1"}),
    );
    assert!(text.contains("readonly"), "{text}");
    assert_eq!(sqlite(&db, "SELECT COUNT(*) FROM messages;").trim(), "6");
    assert_eq!(sqlite(&db, "PRAGMA user_version;").trim(), "0");

    // More than one statement: counted by SQLite, refused.
    let text = o.fails(
        "email_db",
        json!({"action": "query", "sql": "SELECT 1; SELECT 2"}),
    );
    assert!(text.contains("SQLite parsed 2 statements"), "{text}");
    let text = o.fails(
        "email_db",
        json!({"action": "query", "sql": "SELECT 1) ; SELECT 2; SELECT * FROM (SELECT 3"}),
    );
    assert!(text.contains("SQLite parsed 3 statements"), "{text}");
    assert!(!text.contains("1. "), "no rows come back: {text}");

    // Other databases and files: refused by the shell's safe mode.
    std::fs::write(o.home().join("other.db"), b"").unwrap();
    let text = o.fails(
        "email_db",
        json!({"action": "query", "sql": "ATTACH '/officer/user/other.db' AS other"}),
    );
    assert!(text.contains("cannot run ATTACH in safe mode"), "{text}");
    let text = o.fails(
        "email_db",
        json!({"action": "query", "sql": "SELECT readfile('/etc/hostname')"}),
    );
    assert!(text.contains("readfile() function in safe mode"), "{text}");

    // Bad SQL: SQLite's own message.
    let text = o.fails(
        "email_db",
        json!({"action": "query", "sql": "SELECT nope FROM messages"}),
    );
    assert!(text.contains("no such column: nope"), "{text}");
    let text = o.fails("email_db", json!({"action": "query"}));
    assert!(text.contains("needs `sql`"), "{text}");

    // Large results go to a file in the home.
    let text = o.ok(
        "email_db",
        json!({"action": "query", "sql": "SELECT id, subject FROM messages ORDER BY id",
               "output_path": "exports/mail.json"}),
    );
    assert!(
        text.contains("6 rows saved to /officer/user/exports/mail.json"),
        "{text}"
    );
    let saved: Value =
        serde_json::from_slice(&std::fs::read(o.home().join("exports/mail.json")).unwrap())
            .unwrap();
    assert_eq!(saved[0]["subject"], "Café façade renovation");
    assert_eq!(saved.as_array().unwrap().len(), 6);
    let text = o.fails(
        "email_db",
        json!({"action": "query", "sql": "SELECT 1", "limit": 5000}),
    );
    assert!(text.contains("output_path"), "{text}");
}

#[test]
fn a_missing_database_says_what_to_do() {
    let (o, _db) = officer(false);
    let text = o.fails("email_db", json!({"action": "stats"}));
    assert!(
        text.contains("No email database at /officer/data/emails.db")
            && text.contains("OFFICER_EMAIL_DB"),
        "{text}"
    );
}
