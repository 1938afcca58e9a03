import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  action: string;
  sql?: string;
  text?: string;
  thread_id?: string;
  limit?: number;
  output_path?: string;
};

type Row = Record<string, unknown>;

const DEFAULT_DB = '/officer/data/emails.db';
const DEFAULT_LIMIT = 50;
// Rows returned inline; more need output_path (the seed's advice for large outputs).
const MAX_INLINE_LIMIT = 1000;
const MAX_FILE_LIMIT = 100_000;
const MAX_VALUE_CHARS = 2000;
const MAX_SQL_BYTES = 100_000;
const TIMEOUT_MS = 60_000;
const HOME = process.env.HOME || process.env.OFFICER_USER_ROOT || '/officer/user';

class ToolError extends Error {}

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function findProgram(name: string): string | undefined {
  for (const dir of (process.env.PATH || '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A SQL string literal: the only escape SQLite knows inside '…' is a doubled quote. */
function literal(s: string): string {
  if (s.includes('\0')) throw new ToolError('text must not contain NUL characters.');
  return `'${s.replace(/'/g, "''")}'`;
}

/**
 * Runs one SQL text through `sqlite3` with the database's own guards:
 * - `-readonly`: the file is opened SQLITE_OPEN_READONLY; any write fails with
 *   "attempt to write a readonly database (8)";
 * - `PRAGMA query_only=1`: no write even to TEMP tables;
 * - `-safe`: the shell's safe mode, whose authorizer refuses ATTACH/DETACH,
 *   load_extension(), readfile()/writefile()/edit() and file dot-commands;
 * - `-bail`: the first error stops the run;
 * - `.stats vmstep`: sqlite prints one `VM-steps: N` line after every statement it ran,
 *   so the number of statements is counted by sqlite's own parser, not by a string check.
 * The SQL is an argument, never stdin, so no line of it can be read as a dot-command.
 * Returns the result sets, one per statement sqlite executed.
 */
async function sqlite(
  db: string,
  sql: string,
  signal: AbortSignal | undefined,
): Promise<Row[][]> {
  const bin = findProgram('sqlite3');
  if (!bin) {
    throw new ToolError(
      'sqlite3 is not installed: install the Debian package `sqlite3` (apt-get install sqlite3).',
    );
  }
  if (Buffer.byteLength(sql) > MAX_SQL_BYTES) {
    throw new ToolError(`The SQL is longer than ${MAX_SQL_BYTES} bytes; write a shorter query.`);
  }
  const args = [
    '-readonly',
    '-safe',
    '-bail',
    '-json',
    '-cmd',
    '.timeout 5000',
    '-cmd',
    'PRAGMA query_only=1',
    '-cmd',
    '.stats vmstep',
    db,
    sql,
  ];
  const { code, stdout, stderr } = await run(bin, args, signal);
  const sets: Row[][] = [];
  let buffer: string[] = [];
  for (const line of stdout.split('\n')) {
    if (/^VM-steps: \d+$/.test(line)) {
      const json = buffer.join('\n').trim();
      sets.push(json ? (JSON.parse(json) as Row[]) : []);
      buffer = [];
    } else {
      buffer.push(line);
    }
  }
  if (code !== 0) {
    const message = stderr.trim().replace(/^Error: /, '') || `sqlite3 exited with status ${code}`;
    throw new ToolError(`The database refused the query: ${message}`);
  }
  return sets;
}

function run(
  bin: string,
  args: string[],
  signal: AbortSignal | undefined,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    if (signal?.aborted) {
      reject(new ToolError('Cancelled.'));
      return;
    }
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    let errBytes = 0;
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      if (errBytes < 64 * 1024) errs.push(d);
      errBytes += d.length;
    });
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(kill, TIMEOUT_MS);
    signal?.addEventListener('abort', kill, { once: true });
    child.on('error', (e) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      reject(e);
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      if (signal?.aborted) return reject(new ToolError('Cancelled.'));
      if (sig) {
        return reject(
          new ToolError(`sqlite3 was stopped (${sig}) after ${TIMEOUT_MS / 1000} s; simplify the query.`),
        );
      }
      resolvePromise({
        code: code ?? 1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(errs).toString('utf8'),
      });
    });
  });
}

/** The rows of a query that must be exactly one statement. */
async function one(db: string, sql: string, signal: AbortSignal | undefined): Promise<Row[]> {
  const sets = await sqlite(db, sql, signal);
  if (sets.length !== 1) {
    throw new ToolError(
      `SQLite parsed ${sets.length} statements; send exactly one SELECT (or WITH … SELECT) ` +
        'without a semicolon in the middle. Nothing was returned.',
    );
  }
  return sets[0];
}

function show(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_VALUE_CHARS
    ? `${flat.slice(0, MAX_VALUE_CHARS)}… [${flat.length} chars; use output_path for full values]`
    : flat;
}

function table(rows: Row[]): string {
  return rows
    .map((r, i) => {
      const fields = Object.entries(r).map(([k, v]) => `${k}: ${show(v)}`).join(' | ');
      return `${i + 1}. ${fields}`;
    })
    .join('\n');
}

function outputFile(path: string): string {
  const full = isAbsolute(path) ? path : resolve(HOME, path);
  mkdirSync(dirname(full), { recursive: true });
  return full;
}

function limitOf(params: Params): number {
  const max = params.output_path ? MAX_FILE_LIMIT : MAX_INLINE_LIMIT;
  const raw = params.limit ?? DEFAULT_LIMIT;
  if (!Number.isFinite(raw) || raw < 1 || Math.floor(raw) !== raw) {
    throw new ToolError(`limit must be a whole number from 1 to ${max}.`);
  }
  if (raw > max) {
    throw new ToolError(
      params.output_path
        ? `limit must be at most ${max}.`
        : `limit must be at most ${max} when rows are returned inline; pass output_path to save up to ${MAX_FILE_LIMIT} rows to a file.`,
    );
  }
  return raw;
}

function rowsResult(rows: Row[], params: Params, limit: number, what: string): ToolResult {
  if (params.output_path) {
    const file = outputFile(params.output_path);
    writeFileSync(file, JSON.stringify(rows, null, 2));
    return ok(`${rows.length} ${what} saved to ${file} (JSON array of objects).`);
  }
  if (rows.length === 0) return ok(`No ${what}.`);
  const more = rows.length === limit ? ` (the limit, ${limit}; there may be more: raise limit or use output_path)` : '';
  return ok(`${rows.length} ${what}${more}:\n\n${table(rows)}`);
}

async function query(db: string, params: Params, signal?: AbortSignal): Promise<ToolResult> {
  if (!params.sql || !params.sql.trim()) {
    return err('The query action needs `sql`: one SELECT statement (CTEs with WITH are fine).');
  }
  const limit = limitOf(params);
  // A trailing semicolon would end the statement inside the wrapper: drop it. Whether the
  // SQL is one statement is sqlite's call (see `one`), not this trim's.
  const user = params.sql.trim().replace(/[;\s]+$/, '');
  // Newlines keep a trailing `-- comment` from swallowing the wrapper's end.
  const sql = `SELECT * FROM (\n${user}\n) LIMIT ${limit}`;
  let rows: Row[];
  try {
    rows = await one(db, sql, signal);
  } catch (e) {
    if (!(e instanceof ToolError && /syntax error/.test(e.message))) throw e;
    // Not a SELECT that can be wrapped (a PRAGMA, EXPLAIN, a write, several statements):
    // run it as written, under the same guards, so that the database itself answers
    // (error 8 for a write, safe mode for ATTACH, its own syntax error, its statement
    // count); rows beyond the limit are dropped here.
    rows = (await one(db, user, signal)).slice(0, limit);
  }
  return rowsResult(rows, params, limit, 'rows');
}

async function search(db: string, params: Params, signal?: AbortSignal): Promise<ToolResult> {
  if (!params.text || !params.text.trim()) {
    return err(
      'The search action needs `text`: an FTS5 query such as `invoice AND acme`, `"exact phrase"`, `subject:report` or `budg*`.',
    );
  }
  const limit = limitOf(params);
  const sql = `SELECT m.id, m.thread_id, m.sent_at, m.from_name, m.from_email, m.subject,
  snippet(messages_fts, -1, '[', ']', '…', 16) AS match
FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
WHERE messages_fts MATCH ${literal(params.text)} AND m.is_deleted = 0
ORDER BY rank LIMIT ${limit}`;
  try {
    const rows = await one(db, sql, signal);
    return rowsResult(rows, params, limit, 'matching messages');
  } catch (e) {
    if (e instanceof ToolError && /fts5|syntax error|no such column/i.test(e.message)) {
      throw new ToolError(
        `${e.message}\nThe search text is an FTS5 query: words are ANDed with AND/OR/NOT, phrases go in double quotes, ` +
          'a column filter is `subject:word` (columns: subject, body_text, from_name, from_email), `word*` is a prefix. ' +
          'Quote words holding punctuation, e.g. "acme-corp".',
      );
    }
    throw e;
  }
}

async function thread(db: string, params: Params, signal?: AbortSignal): Promise<ToolResult> {
  if (!params.thread_id || !params.thread_id.trim()) {
    return err('The thread action needs `thread_id` (the thread_id column of messages, as search and query return it).');
  }
  const limit = limitOf(params);
  const id = literal(params.thread_id.trim());
  const sql = `SELECT m.id, m.sent_at, m.from_name, m.from_email, m.to_json AS "to", m.cc_json AS cc,
  m.subject, m.is_read, m.is_outgoing,
  (SELECT group_concat(l.name, ', ') FROM message_labels ml JOIN labels l ON l.id = ml.label_id
     WHERE ml.message_id = m.id) AS labels,
  (SELECT group_concat(coalesce(a.filename, '(unnamed)') || ' (' || a.mime_type || ', ' ||
     coalesce(a.size_bytes, '?') || ' bytes)', '; ') FROM attachments a WHERE a.message_id = m.id) AS attachments,
  m.body_text AS body, m.body_html AS html, m.snippet
FROM messages m WHERE m.thread_id = ${id} AND m.is_deleted = 0
ORDER BY m.internal_date_ms, m.id LIMIT ${limit}`;
  const rows = await one(db, sql, signal);
  if (rows.length === 0) {
    return err(`No messages in thread ${params.thread_id}. Find thread ids with action=search or action=query.`);
  }
  if (params.output_path) return rowsResult(rows, params, limit, 'messages');
  const parts = rows.map((r, i) => {
    const head = [
      `--- message ${i + 1} of ${rows.length} (id ${r.id}) ---`,
      `Date: ${show(r.sent_at)}`,
      `From: ${show(r.from_name)} <${show(r.from_email)}>`,
      `To: ${addresses(r.to)}`,
      r.cc && r.cc !== '[]' ? `Cc: ${addresses(r.cc)}` : '',
      `Subject: ${show(r.subject)}`,
      r.labels ? `Labels: ${show(r.labels)}` : '',
      r.attachments ? `Attachments: ${show(r.attachments)}` : '',
      `${r.is_read ? 'read' : 'unread'}${r.is_outgoing ? ', sent by the user' : ''}`,
    ].filter(Boolean);
    const body =
      typeof r.body === 'string' && r.body.trim()
        ? r.body
        : typeof r.html === 'string' && r.html.trim()
          ? htmlText(r.html)
          : show(r.snippet);
    const shown = body.length > 20_000 ? `${body.slice(0, 20_000)}\n… [${body.length} chars; use output_path for the full text]` : body;
    return `${head.join('\n')}\n\n${shown}`;
  });
  const more = rows.length === limit ? ` (first ${limit}; raise limit for more)` : '';
  return ok(`Thread ${params.thread_id}: ${rows.length} messages${more}\n\n${parts.join('\n\n')}`);
}

/** The readable text of an HTML-only message: tags dropped, common entities decoded. */
function htmlText(html: string): string {
  return html
    .replace(/<(script|style|head)[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/(p|div|li|tr|h[1-6])>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function addresses(json: unknown): string {
  if (typeof json !== 'string') return '';
  try {
    const list = JSON.parse(json) as Array<{ name?: string; email?: string }>;
    return list.map((a) => (a.name ? `${a.name} <${a.email ?? ''}>` : (a.email ?? ''))).join(', ');
  } catch {
    return json;
  }
}

async function stats(db: string, signal?: AbortSignal): Promise<ToolResult> {
  const tables = await one(
    db,
    "SELECT name, type FROM sqlite_schema WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'messages_fts_%' ORDER BY name",
    signal,
  );
  const lines: string[] = [`Database: ${db} (${statSync(db).size} bytes)`, '', 'Rows per table:'];
  const counts = tables.length
    ? await one(
        db,
        tables
          .map((t) => `SELECT ${literal(String(t.name))} AS name, COUNT(*) AS n FROM "${String(t.name).replace(/"/g, '""')}"`)
          .join(' UNION ALL '),
        signal,
      )
    : [];
  for (const c of counts) lines.push(`  ${c.name}: ${c.n}`);
  const names = new Set(tables.map((t) => t.name));
  if (names.has('messages')) {
    const [m] = await one(
      db,
      `SELECT COUNT(*) AS total, SUM(is_deleted) AS deleted, SUM(is_read = 0 AND is_deleted = 0) AS unread,
        SUM(is_outgoing) AS sent, COUNT(DISTINCT thread_id) AS threads,
        MIN(sent_at) AS first, MAX(sent_at) AS last FROM messages`,
      signal,
    );
    lines.push(
      '',
      `Messages: ${m.total} (${m.unread ?? 0} unread, ${m.sent ?? 0} sent by the user, ${m.deleted ?? 0} deleted), ${m.threads} threads`,
      `Date range: ${m.first ?? '-'} … ${m.last ?? '-'}`,
    );
    if (names.has('accounts')) {
      const accounts = await one(
        db,
        `SELECT a.email, a.provider, COUNT(m.id) AS messages, MAX(m.sent_at) AS newest
         FROM accounts a LEFT JOIN messages m ON m.account_id = a.id GROUP BY a.id ORDER BY a.email`,
        signal,
      );
      lines.push('', 'Accounts:');
      for (const a of accounts) lines.push(`  ${a.email} (${a.provider}): ${a.messages} messages, newest ${a.newest ?? '-'}`);
    }
    const senders = await one(
      db,
      `SELECT from_email, MAX(from_name) AS name, COUNT(*) AS n FROM messages
       WHERE is_deleted = 0 AND is_outgoing = 0 AND from_email IS NOT NULL
       GROUP BY from_email ORDER BY n DESC, from_email LIMIT 10`,
      signal,
    );
    lines.push('', 'Top senders:');
    for (const s of senders) lines.push(`  ${s.n}  ${s.name ? `${s.name} ` : ''}<${s.from_email}>`);
    if (names.has('labels') && names.has('message_labels')) {
      const labels = await one(
        db,
        `SELECT l.name, COUNT(ml.message_id) AS n FROM labels l LEFT JOIN message_labels ml ON ml.label_id = l.id
         GROUP BY l.id ORDER BY n DESC, l.name LIMIT 20`,
        signal,
      );
      lines.push('', 'Labels:');
      for (const l of labels) lines.push(`  ${l.name}: ${l.n}`);
    }
  }
  return ok(lines.join('\n'));
}

async function schema(db: string, signal?: AbortSignal): Promise<ToolResult> {
  const rows = await one(
    db,
    `SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
       AND name NOT LIKE 'messages_fts_%' AND type IN ('table', 'view', 'index')
     ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'view' THEN 1 ELSE 2 END, rowid`,
    signal,
  );
  const ddl = rows.map((r) => `${String(r.sql).trim()};`).join('\n\n');
  return ok(
    `Schema of ${db}:\n\n${ddl}\n\nNotes: dates are ISO 8601 UTC text (sent_at) and epoch ms (internal_date_ms); ` +
      'to_json/cc_json/bcc_json are JSON arrays of {"name","email"} (use json_each); labels join via message_labels; ' +
      'messages_fts is the full-text index (action=search, or `messages_fts MATCH \'…\'` in SQL); ' +
      'skip rows with is_deleted = 1 unless asked; the threads view summarises each thread.',
  );
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  _onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const db = process.env.OFFICER_EMAIL_DB || DEFAULT_DB;
    if (!existsSync(db)) {
      return err(
        `No email database at ${db}. The mail sync has not created it yet, or OFFICER_EMAIL_DB points elsewhere: ` +
          'ask the user to connect a mailbox (Settings → Integrations) and let it sync, or have the operator set ' +
          'OFFICER_EMAIL_DB ([env] in toolhost.toml) to the database file.',
      );
    }
    if (!statSync(db).isFile()) return err(`${db} (OFFICER_EMAIL_DB) is not a file.`);
    switch (params.action) {
      case 'query':
        return await query(db, params, signal);
      case 'search':
        return await search(db, params, signal);
      case 'thread':
        return await thread(db, params, signal);
      case 'stats':
        return await stats(db, signal);
      case 'schema':
        return await schema(db, signal);
      default:
        return err(`Unknown action "${params.action}". Use one of: query, search, thread, stats, schema.`);
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof ToolError ? message : `email_db failed: ${message}`);
  }
}
