import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  action: string;
  query?: string;
  label_ids?: string;
  max_results?: number;
  page_token?: string;
  include_spam_trash?: boolean;
  message_id?: string;
  thread_id?: string;
  attachment_id?: string;
  format?: string;
  output_path?: string;
  access_token?: string;
};

type Header = { name: string; value: string };

type Part = {
  partId?: string;
  mimeType?: string;
  filename?: string;
  headers?: Header[];
  body?: { size?: number; data?: string; attachmentId?: string };
  parts?: Part[];
};

type Message = {
  id: string;
  threadId?: string;
  labelIds?: string[];
  snippet?: string;
  internalDate?: string;
  sizeEstimate?: number;
  payload?: Part;
  raw?: string;
};

type Attachment = { filename: string; mimeType: string; size: number; attachmentId?: string; partId?: string };

const HOME = process.env.HOME || process.env.OFFICER_USER_ROOT || '/officer/user';
const GMAIL = 'https://gmail.googleapis.com';
const TOKEN_URL = 'https://oauth2.googleapis.com/token';
const REQUEST_TIMEOUT_MS = 60_000;
const PARALLEL = 8;
const MAX_BODY_CHARS = 50_000;
const MAX_INLINE_CHARS = 200_000;

class ToolError extends Error {}

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

// ---------------------------------------------------------------- credentials

type Auth = {
  apiBase: string;
  tokenUrl: string;
  accessToken?: string;
  refreshToken?: string;
  clientId?: string;
  clientSecret?: string;
  /** The token came from the access_token parameter: never refreshed. */
  explicit: boolean;
  refreshed: boolean;
};

function resources(): Record<string, unknown> {
  try {
    const parsed = JSON.parse(process.env.OFFICER_RESOURCES || '{}') as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function authFrom(params: Params): Auth {
  const raw = resources().gmail;
  const conf = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const str = (...keys: string[]) => {
    for (const k of keys) {
      const v = conf[k];
      if (typeof v === 'string' && v.trim()) return v.trim();
    }
    return undefined;
  };
  const env = (name: string) => process.env[name]?.trim() || undefined;
  const explicit = !!params.access_token?.trim();
  return {
    apiBase: (str('apiBaseUrl', 'api_base_url', 'baseUrl', 'base_url') || GMAIL).replace(/\/+$/, ''),
    tokenUrl: str('tokenUrl', 'token_url') || TOKEN_URL,
    accessToken: params.access_token?.trim() || str('accessToken', 'access_token', 'token') || env('OFFICER_GMAIL_ACCESS_TOKEN'),
    refreshToken: explicit ? undefined : str('refreshToken', 'refresh_token') || env('OFFICER_GMAIL_REFRESH_TOKEN'),
    clientId: str('clientId', 'client_id') || env('OFFICER_GMAIL_CLIENT_ID'),
    clientSecret: str('clientSecret', 'client_secret') || env('OFFICER_GMAIL_CLIENT_SECRET'),
    explicit,
    refreshed: false,
  };
}

function canRefresh(auth: Auth): boolean {
  return !auth.explicit && !auth.refreshed && !!auth.refreshToken && !!auth.clientId && !!auth.clientSecret;
}

// ---------------------------------------------------------------- HTTP

async function send(url: string, init: RequestInit, signal: AbortSignal | undefined, what: string): Promise<Response> {
  if (signal?.aborted) throw new ToolError('Cancelled.');
  const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  try {
    return await fetch(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (e) {
    if (signal?.aborted) throw new ToolError('Cancelled.');
    if (timeout.aborted) throw new ToolError(`${what} at ${url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s; try again later.`);
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    throw new ToolError(
      `Cannot reach ${what} at ${new URL(url).origin} (${e instanceof Error ? e.message : String(e)}${cause}). ` +
        'Check the network, or the apiBaseUrl/tokenUrl override in Settings → Integrations → Gmail.',
    );
  }
}

async function refresh(auth: Auth, signal: AbortSignal | undefined, onUpdate: OnUpdate | undefined): Promise<void> {
  auth.refreshed = true;
  onUpdate?.({ content: [{ type: 'text', text: 'Refreshing the Gmail access token…' }] });
  const body = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: auth.refreshToken ?? '',
    client_id: auth.clientId ?? '',
    client_secret: auth.clientSecret ?? '',
  });
  const response = await send(
    auth.tokenUrl,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: body.toString(),
    },
    signal,
    "Google's token endpoint",
  );
  const text = await response.text();
  let parsed: { access_token?: string; error?: string; error_description?: string } = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    // reported below
  }
  if (!response.ok || !parsed.access_token) {
    const why = parsed.error
      ? `${parsed.error}${parsed.error_description ? `: ${parsed.error_description}` : ''}`
      : text.slice(0, 300) || `status ${response.status}`;
    throw new ToolError(
      `Refreshing the Gmail access token failed (${response.status} ${why}). The authorisation has expired or was revoked: ` +
        'ask the user to reconnect Gmail in Settings → Integrations → Gmail.',
    );
  }
  auth.accessToken = parsed.access_token;
}

type GoogleError = { code?: number; message?: string; status?: string; errors?: Array<{ reason?: string; message?: string }> };

/** GET {apiBase}/gmail/v1/users/me/{path}: the JSON answer; one refresh and retry on 401. */
async function gmail<T>(
  auth: Auth,
  path: string,
  query: URLSearchParams | undefined,
  signal: AbortSignal | undefined,
  onUpdate: OnUpdate | undefined,
  what: string,
): Promise<T> {
  if (!auth.accessToken && canRefresh(auth)) await refresh(auth, signal, onUpdate);
  const qs = query && [...query.keys()].length ? `?${query.toString()}` : '';
  const url = `${auth.apiBase}/gmail/v1/users/me/${path}${qs}`;
  for (let attempt = 0; ; attempt++) {
    const token = auth.accessToken;
    const response = await send(
      url,
      { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } },
      signal,
      'Gmail',
    );
    const text = await response.text();
    if (response.status === 401 && attempt === 0) {
      // Once per call: refresh; a request that raced another's refresh just retries.
      if (auth.accessToken !== token) continue;
      if (canRefresh(auth)) {
        await refresh(auth, signal, onUpdate);
        continue;
      }
    }
    if (!response.ok) throw new ToolError(googleError(response.status, text, what, auth));
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ToolError(`Gmail answered with something that is not JSON: ${text.slice(0, 200)}`);
    }
  }
}

function googleError(status: number, text: string, what: string, auth: Auth): string {
  let e: GoogleError = {};
  try {
    const parsed = JSON.parse(text) as { error?: GoogleError | string; error_description?: string };
    if (parsed.error && typeof parsed.error === 'object') e = parsed.error;
    else if (typeof parsed.error === 'string') e = { message: parsed.error_description || parsed.error };
  } catch {
    e = { message: text.slice(0, 300) };
  }
  const message = e.message || `status ${status}`;
  const reasons = (e.errors ?? []).map((x) => x.reason).filter(Boolean).join(', ');
  const detail = `${status}${e.status ? ` ${e.status}` : ''}${reasons ? `, ${reasons}` : ''}: ${message}`;
  switch (status) {
    case 400:
      return `Gmail refused the request (${detail}). Fix the parameter it names (a Gmail search in query, ids from list_messages).`;
    case 401:
      return auth.explicit
        ? `Gmail rejected the access_token passed (${detail}). Leave access_token out to use the configured account, or pass a valid token.`
        : `Gmail rejected the access token (${detail}) and it could not be refreshed${auth.refreshed ? ' (a refreshed token was rejected too)' : ' (no refreshToken, clientId and clientSecret configured)'}. Ask the user to reconnect Gmail in Settings → Integrations → Gmail.`;
    case 403:
      if (/rate|quota/i.test(reasons + message)) return `Gmail is rate limiting (${detail}). Wait a minute and retry, with fewer calls.`;
      return `The Gmail token lacks the permission for this (${detail}). It needs the scope https://www.googleapis.com/auth/gmail.readonly: ask the user to reconnect Gmail in Settings → Integrations and allow reading mail.`;
    case 404:
      return `No ${what} (Gmail answered ${detail}). The id is wrong or the mail was deleted: take ids from list_messages or get_message.`;
    case 429:
      return `Gmail is rate limiting (${detail}). Wait a minute and retry, with fewer calls.`;
    default:
      return status >= 500
        ? `Gmail failed (${detail}). This is on Google's side: retry in a moment.`
        : `Gmail answered ${detail}.`;
  }
}

// ---------------------------------------------------------------- MIME

function base64url(data: string | undefined): Buffer {
  return Buffer.from((data ?? '').replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function header(part: Part | undefined, name: string): string | undefined {
  const lower = name.toLowerCase();
  return part?.headers?.find((h) => h.name.toLowerCase() === lower)?.value;
}

function decodeBytes(bytes: Buffer, charset: string | undefined): string {
  const cs = (charset || 'utf-8').trim().toLowerCase().replace(/^"|"$/g, '');
  if (cs === 'utf-8' || cs === 'utf8' || cs === 'us-ascii' || cs === 'ascii') return bytes.toString('utf8');
  // Gmail may have converted the text to UTF-8 already: valid UTF-8 wins over the label.
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // not UTF-8: the declared charset
  }
  try {
    return new TextDecoder(cs).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

function charsetOf(part: Part): string | undefined {
  const ct = header(part, 'Content-Type') ?? '';
  return /charset\s*=\s*"?([^";\s]+)/i.exec(ct)?.[1];
}

/** RFC 2047 encoded words (=?charset?B|Q?…?=), adjacent ones joined. */
function decodeWords(value: string | undefined): string {
  if (!value) return '';
  return value
    .replace(/(=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)\s+(?==\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)/g, '$1')
    .replace(/=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g, (whole, charset: string, enc: string, text: string) => {
      try {
        const bytes =
          enc.toUpperCase() === 'B'
            ? Buffer.from(text, 'base64')
            : Buffer.from(
                text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
                'latin1',
              );
        return decodeBytes(bytes, charset.split('*')[0]);
      } catch {
        return whole;
      }
    });
}

const ENTITIES: Record<string, string> = {
  nbsp: ' ', lt: '<', gt: '>', quot: '"', apos: "'", amp: '&', copy: '©', reg: '®', hellip: '…',
  mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', euro: '€', bull: '•',
  auml: 'ä', ouml: 'ö', uuml: 'ü', Auml: 'Ä', Ouml: 'Ö', Uuml: 'Ü', szlig: 'ß', eacute: 'é', egrave: 'è',
};

/** The readable text of an HTML body: scripts and styles dropped, blocks as lines, entities decoded. */
function htmlText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style|head|title)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<a\b[^>]*href\s*=\s*"(https?:[^"]+)"[^>]*>([\s\S]*?)<\/a>/gi, (_, href: string, inner: string) =>
      inner.replace(/<[^>]+>/g, '').trim() === href ? href : `${inner} (${href})`,
    )
    .replace(/<li\b[^>]*>/gi, '\n- ')
    .replace(/<br\s*\/?>|<\/(p|div|tr|h[1-6]|table|ul|ol|blockquote)\s*>|<(p|div|h[1-6]|tr)\b[^>]*>/gi, '\n')
    .replace(/<\/t[dh]\s*>/gi, '\t')
    .replace(/<[^>]+>/g, '')
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&([a-zA-Z]+);/g, (whole, name: string) => ENTITIES[name] ?? whole)
    .replace(/[ \t\r\f\v]+\n/g, '\n')
    .replace(/\n[ \t]+/g, '\n')
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function isAttachment(part: Part): boolean {
  if (part.filename) return true;
  const disposition = header(part, 'Content-Disposition') ?? '';
  return /^\s*attachment/i.test(disposition);
}

type Walk = { texts: Array<{ kind: 'plain' | 'html'; text: string }>; attachments: Attachment[] };

function leafText(part: Part): { kind: 'plain' | 'html'; text: string } | undefined {
  const mime = (part.mimeType || 'text/plain').toLowerCase();
  if (isAttachment(part) || part.body?.attachmentId) return undefined;
  if (mime !== 'text/plain' && mime !== 'text/html') return undefined;
  const text = decodeBytes(base64url(part.body?.data), charsetOf(part));
  return { kind: mime === 'text/html' ? 'html' : 'plain', text };
}

function walk(part: Part | undefined, out: Walk): void {
  if (!part) return;
  const mime = (part.mimeType || '').toLowerCase();
  if (mime.startsWith('multipart/')) {
    const children = part.parts ?? [];
    if (mime === 'multipart/alternative') {
      // The alternatives say the same thing: the plain one, else the richest other.
      const plain = children.find((c) => (c.mimeType || '').toLowerCase() === 'text/plain' && !isAttachment(c));
      const chosen = plain ?? children[children.length - 1];
      for (const c of children) {
        if (c === chosen) walk(c, out);
        else collectAttachments(c, out);
      }
      return;
    }
    for (const c of children) walk(c, out);
    return;
  }
  const text = leafText(part);
  if (text) {
    out.texts.push(text);
    return;
  }
  if (part.body?.attachmentId || part.filename || (part.body?.size ?? 0) > 0) {
    out.attachments.push({
      filename: decodeWords(part.filename) || `part-${part.partId ?? '0'}`,
      mimeType: part.mimeType || 'application/octet-stream',
      size: part.body?.size ?? 0,
      attachmentId: part.body?.attachmentId,
      partId: part.partId,
    });
  }
}

/** The attachments inside an alternative that is not shown (e.g. inline images of the HTML one). */
function collectAttachments(part: Part, out: Walk): void {
  const inner: Walk = { texts: [], attachments: [] };
  walk(part, inner);
  out.attachments.push(...inner.attachments);
}

function bodyOf(message: Message): { text: string; source: string; attachments: Attachment[] } {
  const out: Walk = { texts: [], attachments: [] };
  walk(message.payload, out);
  const plain = out.texts.filter((t) => t.kind === 'plain');
  const source = plain.length ? 'text/plain' : out.texts.length ? 'text/html, as text' : 'none';
  const text = out.texts
    .map((t) => (t.kind === 'html' ? htmlText(t.text) : t.text.replace(/\r\n/g, '\n')).trim())
    .filter(Boolean)
    .join('\n\n');
  return { text, source, attachments: out.attachments };
}

// ---------------------------------------------------------------- rendering

function date(message: Message): string {
  const h = header(message.payload, 'Date');
  if (message.internalDate && /^\d+$/.test(message.internalDate)) {
    return new Date(Number(message.internalDate)).toISOString().replace('.000Z', 'Z');
  }
  return h ?? '';
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function renderMessage(message: Message, full: boolean): string {
  const lines = [`Message ${message.id} (thread ${message.threadId ?? '?'})`];
  for (const name of ['From', 'To', 'Cc', 'Reply-To', 'Date', 'Subject']) {
    const v = header(message.payload, name);
    if (v !== undefined) lines.push(`${name}: ${decodeWords(v)}`);
  }
  if (message.labelIds?.length) lines.push(`Labels: ${message.labelIds.join(', ')}`);
  if (!full) {
    if (message.snippet) lines.push(`Snippet: ${decodeEntities(message.snippet)}`);
    return lines.join('\n');
  }
  const body = bodyOf(message);
  if (body.attachments.length) {
    lines.push(`Attachments (${body.attachments.length}):`);
    for (const a of body.attachments) {
      lines.push(
        `  - ${a.filename} (${a.mimeType}, ${size(a.size)})${a.attachmentId ? ` attachment_id: ${a.attachmentId}` : ' (inline, no attachment_id)'}`,
      );
    }
  }
  let text = body.text;
  if (text.length > MAX_BODY_CHARS) {
    text = `${text.slice(0, MAX_BODY_CHARS)}\n… [${text.length} characters; use output_path for the full text]`;
  }
  lines.push('', `--- body (${body.source}) ---`, text || '(no text)');
  return lines.join('\n');
}

function decodeEntities(s: string): string {
  return s
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&([a-zA-Z]+);/g, (whole, name: string) => ENTITIES[name] ?? whole);
}

function target(path: string): string {
  return isAbsolute(path) ? path : resolve(HOME, path);
}

function deliver(text: string, params: Params, fallback: string, summary: string): ToolResult {
  if (params.output_path || text.length > MAX_INLINE_CHARS) {
    const file = params.output_path ? target(params.output_path) : join(HOME, 'gmail', fallback);
    mkdirSync(dirname(file), { recursive: true });
    const fd = openSync(file, 'w');
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    const why = params.output_path ? '' : ' (too long to return; pass output_path to choose where)';
    return ok(`${summary}: ${text.length} characters saved to ${file}${why}. Beginning:\n\n${text.slice(0, 1000)}`);
  }
  return ok(text);
}

// ---------------------------------------------------------------- actions

function requireId(value: string | undefined, name: string, action: string): string {
  const id = value?.trim();
  if (!id) throw new ToolError(`${name} is required for ${action}${name === 'thread_id' ? ' (list_messages and get_message give it)' : ' (list_messages gives it)'}.`);
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new ToolError(`${name} "${id}" is not a Gmail id (letters, digits, - and _ only).`);
  return id;
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  });
  await Promise.all(workers);
  return out;
}

async function listMessages(auth: Auth, params: Params, signal?: AbortSignal, onUpdate?: OnUpdate): Promise<ToolResult> {
  const max = params.max_results ?? 20;
  if (!Number.isInteger(max) || max < 1 || max > 500) throw new ToolError('max_results must be a whole number from 1 to 500.');
  const q = new URLSearchParams();
  if (params.query?.trim()) q.set('q', params.query.trim());
  for (const id of (params.label_ids ?? '').split(',').map((s) => s.trim()).filter(Boolean)) q.append('labelIds', id);
  q.set('maxResults', String(max));
  if (params.page_token?.trim()) q.set('pageToken', params.page_token.trim());
  if (params.include_spam_trash) q.set('includeSpamTrash', 'true');
  const page = await gmail<{ messages?: Array<{ id: string; threadId: string }>; nextPageToken?: string; resultSizeEstimate?: number }>(
    auth,
    'messages',
    q,
    signal,
    onUpdate,
    'such page (the page_token may be stale: start again without it)',
  );
  const ids = page.messages ?? [];
  const what = params.query?.trim() ? `matching "${params.query.trim()}"` : params.label_ids ? `with labels ${params.label_ids}` : 'in the mailbox';
  if (!ids.length) return ok(`No messages ${what}${params.page_token ? ' on this page' : ''}.`);
  onUpdate?.({ content: [{ type: 'text', text: `Reading the headers of ${ids.length} messages…` }] });
  const metaQuery = new URLSearchParams({ format: 'metadata' });
  for (const h of ['From', 'Subject', 'Date']) metaQuery.append('metadataHeaders', h);
  const messages = await mapLimit(ids, PARALLEL, async (m) => {
    try {
      return await gmail<Message>(auth, `messages/${encodeURIComponent(m.id)}`, metaQuery, signal, onUpdate, `message with id ${m.id}`);
    } catch (e) {
      if (e instanceof ToolError && e.message.startsWith('No message')) return { id: m.id, threadId: m.threadId, snippet: '(deleted meanwhile)' } as Message;
      throw e;
    }
  });
  const lines = messages.map((m, i) => {
    const from = decodeWords(header(m.payload, 'From'));
    const subject = decodeWords(header(m.payload, 'Subject')) || '(no subject)';
    const labels = m.labelIds?.length ? ` [${m.labelIds.join(', ')}]` : '';
    const snippet = m.snippet ? `\n   ${decodeEntities(m.snippet)}` : '';
    return `${i + 1}. id: ${m.id} thread: ${m.threadId ?? ''} | ${date(m)} | ${from} | ${subject}${labels}${snippet}`;
  });
  const estimate = page.resultSizeEstimate !== undefined ? ` (about ${page.resultSizeEstimate} in all)` : '';
  let text = `${ids.length} message${ids.length === 1 ? '' : 's'} ${what}${estimate}:\n\n${lines.join('\n')}`;
  text += page.nextPageToken
    ? `\n\nnextPageToken: ${page.nextPageToken} (more messages: call again with page_token set to it)`
    : '\n\nNo more pages.';
  return deliver(text, params, `list-${Date.now()}.txt`, `${ids.length} messages`);
}

function formatOf(params: Params): string {
  const format = params.format || 'full';
  if (!['full', 'metadata', 'raw'].includes(format)) throw new ToolError(`format must be full, metadata or raw, not "${format}".`);
  return format;
}

async function getMessage(auth: Auth, params: Params, signal?: AbortSignal, onUpdate?: OnUpdate): Promise<ToolResult> {
  const id = requireId(params.message_id, 'message_id', 'get_message');
  const format = formatOf(params);
  const message = await gmail<Message>(
    auth,
    `messages/${id}`,
    new URLSearchParams({ format }),
    signal,
    onUpdate,
    `message with id ${id}`,
  );
  if (format === 'raw') {
    const raw = base64url(message.raw).toString('latin1');
    return deliver(raw, params, `message-${id}.eml`, `Message ${id}, RFC 822 source`);
  }
  return deliver(renderMessage(message, format === 'full'), params, `message-${id}.txt`, `Message ${id}`);
}

async function getThread(auth: Auth, params: Params, signal?: AbortSignal, onUpdate?: OnUpdate): Promise<ToolResult> {
  const id = requireId(params.thread_id, 'thread_id', 'get_thread');
  const format = formatOf(params);
  if (format === 'raw') throw new ToolError('format=raw is for get_message; get_thread takes full or metadata.');
  const thread = await gmail<{ id: string; messages?: Message[] }>(
    auth,
    `threads/${id}`,
    new URLSearchParams({ format }),
    signal,
    onUpdate,
    `thread with id ${id}`,
  );
  const messages = thread.messages ?? [];
  const subject = decodeWords(header(messages[0]?.payload, 'Subject')) || '(no subject)';
  const parts = messages.map((m, i) => `===== ${i + 1} of ${messages.length} =====\n${renderMessage(m, format === 'full')}`);
  return deliver(
    `Thread ${id}: ${messages.length} message${messages.length === 1 ? '' : 's'}, "${subject}"\n\n${parts.join('\n\n')}`,
    params,
    `thread-${id}.txt`,
    `Thread ${id}`,
  );
}

async function listLabels(auth: Auth, params: Params, signal?: AbortSignal, onUpdate?: OnUpdate): Promise<ToolResult> {
  const answer = await gmail<{ labels?: Array<{ id: string; name: string; type?: string; messagesTotal?: number; messagesUnread?: number }> }>(
    auth,
    'labels',
    undefined,
    signal,
    onUpdate,
    'labels',
  );
  const labels = answer.labels ?? [];
  const group = (type: string) =>
    labels
      .filter((l) => (l.type ?? 'user') === type)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((l) => `- ${l.name} (id: ${l.id})`);
  const system = group('system');
  const user = group('user');
  const text =
    `${labels.length} labels. Use the id in list_messages' label_ids, or the name in a query (label:name).\n\n` +
    `System labels:\n${system.join('\n') || '(none)'}\n\nUser labels:\n${user.join('\n') || '(none)'}`;
  return deliver(text, params, 'labels.txt', `${labels.length} labels`);
}

function safeName(name: string): string {
  const cleaned = basename(name.replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .replace(/^\.+/, '');
  return cleaned.slice(0, 200) || 'attachment';
}

/** Writes data to path, or to "name (2).ext", "name (3).ext"… when it is taken. */
function writeNew(path: string, data: Buffer): string {
  mkdirSync(dirname(path), { recursive: true });
  const ext = extname(path);
  const stem = path.slice(0, path.length - ext.length);
  for (let n = 1; n < 10_000; n++) {
    const candidate = n === 1 ? path : `${stem} (${n})${ext}`;
    let fd: number;
    try {
      fd = openSync(candidate, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw new ToolError(`Cannot save to ${candidate}: ${(e as Error).message}`);
    }
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    return candidate;
  }
  throw new ToolError(`Too many files named like ${path}; choose another output_path.`);
}

function findAttachment(part: Part | undefined, id: string): Part | undefined {
  if (!part) return undefined;
  if (part.body?.attachmentId === id) return part;
  for (const c of part.parts ?? []) {
    const found = findAttachment(c, id);
    if (found) return found;
  }
  return undefined;
}

async function getAttachment(auth: Auth, params: Params, signal?: AbortSignal, onUpdate?: OnUpdate): Promise<ToolResult> {
  const messageId = requireId(params.message_id, 'message_id', 'get_attachment');
  const attachmentId = params.attachment_id?.trim();
  if (!attachmentId) throw new ToolError('attachment_id is required for get_attachment: get_message lists each attachment with its attachment_id.');
  if (!/^[A-Za-z0-9_-]+$/.test(attachmentId)) throw new ToolError(`attachment_id "${attachmentId}" is not a Gmail attachment id.`);
  // The file name and type come from the message (Gmail's attachment answer has only data).
  const message = await gmail<Message>(
    auth,
    `messages/${messageId}`,
    new URLSearchParams({ format: 'full' }),
    signal,
    onUpdate,
    `message with id ${messageId}`,
  );
  const part = findAttachment(message.payload, attachmentId);
  const attachment = await gmail<{ size?: number; data?: string }>(
    auth,
    `messages/${messageId}/attachments/${attachmentId}`,
    undefined,
    signal,
    onUpdate,
    `attachment ${attachmentId} in message ${messageId} (attachment ids come from get_message of that message)`,
  );
  const data = base64url(attachment.data);
  const name = safeName(decodeWords(part?.filename) || `attachment-${messageId}${part?.mimeType === 'application/pdf' ? '.pdf' : ''}`);
  const wanted = params.output_path?.trim() ? target(params.output_path.trim()) : join(HOME, 'gmail-attachments', name);
  const saved = writeNew(wanted, data);
  const renamed = saved !== wanted ? ` (${wanted} already existed, so it was not overwritten)` : '';
  return ok(`Saved ${part?.filename ? `"${decodeWords(part.filename)}" ` : ''}(${part?.mimeType ?? 'unknown type'}, ${data.length} bytes) to ${saved}${renamed}`);
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const auth = authFrom(params);
    if (!auth.accessToken && !canRefresh(auth)) {
      return err(
        'Gmail is not connected: no access token is configured. Ask the user to connect Gmail in Settings → Integrations → Gmail ' +
          '(OFFICER_RESOURCES.gmail with accessToken, or refreshToken, clientId and clientSecret), or pass access_token.',
      );
    }
    switch (params.action) {
      case 'list_messages':
        return await listMessages(auth, params, signal, onUpdate);
      case 'get_message':
        return await getMessage(auth, params, signal, onUpdate);
      case 'get_thread':
        return await getThread(auth, params, signal, onUpdate);
      case 'list_labels':
        return await listLabels(auth, params, signal, onUpdate);
      case 'get_attachment':
        return await getAttachment(auth, params, signal, onUpdate);
      default:
        return err(`Unknown action "${params.action}": use list_messages, get_message, get_thread, list_labels or get_attachment.`);
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof ToolError ? message : `Gmail failed: ${message}`);
  }
}
