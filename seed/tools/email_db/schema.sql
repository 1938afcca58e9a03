-- Officer's synced mail store (OFFICER_EMAIL_DB, /officer/data/emails.db in a tool's
-- sandbox): the schema the email_db tool reads. Create a database with
--   sqlite3 /srv/officer-mail/emails.db < schema.sql     (or ./create-db.sh FILE)
-- The mail syncer writes it; tools only read it (email_db opens it with sqlite3 -readonly).
PRAGMA foreign_keys = ON;

CREATE TABLE accounts (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  provider TEXT NOT NULL CHECK (provider IN ('gmail', 'imap')),
  display_name TEXT
);

CREATE TABLE sync_state (
  account_id INTEGER PRIMARY KEY REFERENCES accounts(id),
  history_id TEXT,                      -- Gmail historyId of the last sync
  uid_validity INTEGER,                 -- IMAP UIDVALIDITY
  last_sync_at TEXT,
  last_error TEXT
);

CREATE TABLE messages (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  provider_id TEXT NOT NULL,            -- Gmail id, or "<uidvalidity>:<uid>" for IMAP
  thread_id TEXT NOT NULL,
  rfc822_message_id TEXT,
  in_reply_to TEXT,
  subject TEXT,
  snippet TEXT,
  from_name TEXT,
  from_email TEXT,
  to_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(to_json)),   -- [{"name","email"}]
  cc_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(cc_json)),
  bcc_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(bcc_json)),
  sent_at TEXT NOT NULL,                -- ISO 8601 UTC, from the Date: header
  internal_date_ms INTEGER NOT NULL,    -- Gmail internalDate / IMAP INTERNALDATE
  body_text TEXT,
  body_html TEXT,
  size_bytes INTEGER,
  is_read INTEGER NOT NULL DEFAULT 0,
  is_starred INTEGER NOT NULL DEFAULT 0,
  is_outgoing INTEGER NOT NULL DEFAULT 0,
  is_deleted INTEGER NOT NULL DEFAULT 0,
  has_attachments INTEGER NOT NULL DEFAULT 0,
  synced_at TEXT NOT NULL,
  UNIQUE (account_id, provider_id)
);
CREATE INDEX messages_thread ON messages(account_id, thread_id);
CREATE INDEX messages_from ON messages(from_email);
CREATE INDEX messages_date ON messages(internal_date_ms DESC);

CREATE TABLE labels (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  provider_label_id TEXT NOT NULL,      -- Gmail label id (INBOX, Label_12…) or IMAP folder
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('system', 'user')),
  UNIQUE (account_id, provider_label_id)
);

CREATE TABLE message_labels (
  message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  label_id INTEGER NOT NULL REFERENCES labels(id) ON DELETE CASCADE,
  PRIMARY KEY (message_id, label_id)
) WITHOUT ROWID;

CREATE TABLE attachments (
  id INTEGER PRIMARY KEY,
  message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  filename TEXT,
  mime_type TEXT NOT NULL,
  size_bytes INTEGER,
  content_id TEXT,
  provider_attachment_id TEXT,
  local_path TEXT                       -- where the syncer saved it, if it did
);
CREATE INDEX attachments_message ON attachments(message_id);

-- Full-text search over subject, body, sender; diacritics folded ("cafe" finds "Café").
CREATE VIRTUAL TABLE messages_fts USING fts5(
  subject, body_text, from_name, from_email,
  content='messages', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, subject, body_text, from_name, from_email)
  VALUES (new.id, new.subject, new.body_text, new.from_name, new.from_email);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, subject, body_text, from_name, from_email)
  VALUES ('delete', old.id, old.subject, old.body_text, old.from_name, old.from_email);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF subject, body_text, from_name, from_email
  ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, subject, body_text, from_name, from_email)
  VALUES ('delete', old.id, old.subject, old.body_text, old.from_name, old.from_email);
  INSERT INTO messages_fts(rowid, subject, body_text, from_name, from_email)
  VALUES (new.id, new.subject, new.body_text, new.from_name, new.from_email);
END;

CREATE VIEW threads AS
  SELECT account_id, thread_id, COUNT(*) AS message_count,
         MIN(sent_at) AS first_at, MAX(sent_at) AS last_at,
         SUM(1 - is_read) AS unread_count
  FROM messages WHERE is_deleted = 0
  GROUP BY account_id, thread_id;
