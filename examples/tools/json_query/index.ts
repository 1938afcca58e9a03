import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  query: string;
  json?: string;
  path?: string;
  format?: string;
};

type Segment =
  | { kind: 'key'; key: string }
  | { kind: 'index'; index: number }
  | { kind: 'wildcard' };

type Match = { value: unknown; path: string };

const FORMATS = ['json', 'lines', 'count'];
const MAX_FILE_BYTES = 64 * 1024 * 1024;
const MAX_OUTPUT_CHARS = 100_000;

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A malformed query; `position` is a 0-based offset into the query text. */
class QueryError extends Error {
  position: number;
  constructor(message: string, position: number) {
    super(message);
    this.position = position;
  }
}

/** A well-formed query that does not fit the document. */
class PathError extends Error {}

// ---------------------------------------------------------------------------
// Query parsing: $ . key [0] [-1] [*] .* ["quoted.key"] ['quoted']

function parseQuery(query: string): Segment[] {
  const s = query;
  const segments: Segment[] = [];
  let i = 0;
  while (i < s.length && /\s/.test(s[i])) i++;
  if (s[i] === '$') i++;
  let first = true;

  const readKey = (): void => {
    const start = i;
    while (i < s.length && s[i] !== '.' && s[i] !== '[') {
      if (s[i] === ']') throw new QueryError('unexpected "]" without a matching "["', i);
      i++;
    }
    const key = s.slice(start, i).trim();
    if (key === '') throw new QueryError('expected a key name', start);
    segments.push(key === '*' ? { kind: 'wildcard' } : { kind: 'key', key });
  };

  while (i < s.length) {
    const c = s[i];
    if (c === '.') {
      i++;
      if (i >= s.length) {
        // "." alone (or "$.") means the whole document; a trailing dot after a key is a typo.
        if (segments.length === 0) break;
        throw new QueryError('the query ends with "." but a key name must follow', i);
      }
      if (s[i] === '.') throw new QueryError('".." (recursive descent) is not supported; use [*] to go through arrays', i - 1);
      if (s[i] === '[') continue;
      readKey();
    } else if (c === '[') {
      const open = i;
      i++;
      while (s[i] === ' ') i++;
      const q = s[i];
      if (q === '*') {
        i++;
        while (s[i] === ' ') i++;
        if (s[i] !== ']') throw new QueryError('expected "]" after "[*"', i);
        i++;
        segments.push({ kind: 'wildcard' });
      } else if (q === '"' || q === "'") {
        const strStart = i;
        i++;
        // Rewrite the quoted text as a JSON string body, then let JSON.parse apply the
        // escape rules (\" \\ \n \u00e9 ...). Single-quoted keys may also escape \'.
        let body = '';
        let closed = false;
        while (i < s.length) {
          const ch = s[i];
          if (ch === '\\') {
            const next = s[i + 1] ?? '';
            body += next === "'" ? "'" : ch + next;
            i += 2;
          } else if (ch === q) {
            closed = true;
            i++;
            break;
          } else {
            body += ch === '"' ? '\\"' : ch < ' ' ? JSON.stringify(ch).slice(1, -1) : ch;
            i++;
          }
        }
        if (!closed) throw new QueryError(`unterminated quoted key (missing closing ${q})`, strStart);
        let key: string;
        try {
          key = JSON.parse(`"${body}"`);
        } catch {
          throw new QueryError('invalid escape sequence in quoted key', strStart);
        }
        while (s[i] === ' ') i++;
        if (s[i] !== ']') throw new QueryError('expected "]" after the quoted key', i);
        i++;
        segments.push({ kind: 'key', key });
      } else {
        const close = s.indexOf(']', i);
        if (close === -1) throw new QueryError('unclosed "[": expected a number, * or a quoted key followed by "]"', open);
        const inner = s.slice(i, close).trim();
        if (!/^-?\d+$/.test(inner)) {
          const hint = inner === '' ? '' : `; to select the key ${inner} write .${inner} or ["${inner}"]`;
          throw new QueryError(`"[${inner}]" is not an index: brackets take a whole number, * or a quoted key${hint}`, open);
        }
        i = close + 1;
        segments.push({ kind: 'index', index: Number(inner) });
      }
    } else if (first) {
      readKey();
    } else {
      throw new QueryError(`unexpected "${c}": after "]" use .key or [index]`, i);
    }
    first = false;
  }
  return segments;
}

// ---------------------------------------------------------------------------
// Evaluation

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keyPath(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

function where(path: string): string {
  return path === '' ? 'the root' : path;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array of ${v.length} item${v.length === 1 ? '' : 's'}`;
  if (isObject(v)) {
    const keys = Object.keys(v);
    if (keys.length === 0) return 'an empty object';
    const shown = keys.slice(0, 20).join(', ');
    return `an object with keys: ${shown}${keys.length > 20 ? `, ... (${keys.length} in all)` : ''}`;
  }
  const text = JSON.stringify(v);
  const short = text.length > 40 ? `${text.slice(0, 37)}...` : text;
  return `a ${typeof v} (${short})`;
}

function evaluate(root: unknown, segments: Segment[]): { matches: Match[]; fanned: boolean } {
  let current: Match[] = [{ value: root, path: '' }];
  let fanned = false;
  for (const seg of segments) {
    const next: Match[] = [];
    for (const { value, path } of current) {
      if (seg.kind === 'wildcard') {
        if (Array.isArray(value)) {
          value.forEach((v, i) => next.push({ value: v, path: `${path}[${i}]` }));
        } else if (isObject(value)) {
          for (const [k, v] of Object.entries(value)) next.push({ value: v, path: keyPath(path, k) });
        } else if (!fanned) {
          throw new PathError(`[*] needs an array or an object, but ${where(path)} is ${describe(value)}`);
        }
        continue;
      }

      let index: number | undefined;
      if (seg.kind === 'index') index = seg.index;
      else if (Array.isArray(value) && /^-?\d+$/.test(seg.key)) index = Number(seg.key); // items.0

      if (index !== undefined) {
        if (Array.isArray(value)) {
          const at = index < 0 ? value.length + index : index;
          if (at >= 0 && at < value.length) {
            next.push({ value: value[at], path: `${path}[${index}]` });
          } else if (!fanned) {
            const valid = value.length === 0 ? 'the array is empty' : `valid indices are 0..${value.length - 1} or -${value.length}..-1`;
            throw new PathError(`index ${index} is out of range at ${where(path)}: ${describe(value)}, ${valid}`);
          }
        } else if (!fanned) {
          const hint = isObject(value) ? `; use .key to select a field` : '';
          throw new PathError(`[${index}] needs an array, but ${where(path)} is ${describe(value)}${hint}`);
        }
        continue;
      }

      const key = (seg as { key: string }).key;
      if (isObject(value) && Object.prototype.hasOwnProperty.call(value, key)) {
        next.push({ value: value[key], path: keyPath(path, key) });
      } else if (!fanned) {
        if (isObject(value)) {
          const similar = Object.keys(value).find((k) => k.toLowerCase() === key.toLowerCase());
          const hint = similar !== undefined ? ` (did you mean "${similar}"?)` : '';
          throw new PathError(`key "${key}" not found at ${where(path)}${hint}, which is ${describe(value)}`);
        }
        if (Array.isArray(value)) {
          throw new PathError(
            `${where(path)} is ${describe(value)}, not an object, so it has no key "${key}"; ` +
              `use [0] for one item or [*].${key} for every item`,
          );
        }
        throw new PathError(`${where(path)} is ${describe(value)}, so it has no key "${key}"`);
      }
    }
    if (seg.kind === 'wildcard') fanned = true;
    current = next;
  }
  return { matches: current, fanned };
}

// ---------------------------------------------------------------------------
// Input and JSON errors

/** Finds where JSON text stops being valid, for parse errors that carry no position. */
function locateJsonError(text: string): number | undefined {
  let i = 0;
  const n = text.length;
  const ws = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const str = (): void => {
    i++;
    while (i < n) {
      const ch = text[i];
      if (ch === '"') {
        i++;
        return;
      }
      if (ch === '\\') {
        i++;
        if ('"\\/bfnrt'.includes(text[i] ?? 'x')) i++;
        else if (text[i] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) i += 5;
        else fail();
        continue;
      }
      if (ch < ' ') fail();
      i++;
    }
    fail();
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        if (c === '{') {
          ws();
          if (text[i] !== '"') fail();
          str();
          ws();
          if (text[i] !== ':') fail();
          i++;
        }
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === close) {
          i++;
          return;
        }
        fail();
      }
    }
    if (c === '"') return str();
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m) {
      i += m[0].length;
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    fail();
  };
  try {
    value();
    ws();
    return i < n ? i : undefined;
  } catch (p) {
    return typeof p === 'number' ? p : undefined; // a RangeError (absurd nesting) gives up
  }
}

function describeJsonError(e: unknown, text: string, source: string): string {
  // V8 sometimes quotes a piece of the document in the message; the excerpt below is clearer.
  const message = (e instanceof Error ? e.message : String(e)).replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '');
  let pos: number | undefined;
  const m = /at position (\d+)/.exec(message);
  const lc = /\(line (\d+) column (\d+)\)/.exec(message);
  let line: number;
  let col: number;
  if (lc && !m) {
    line = Number(lc[1]);
    col = Number(lc[2]);
  } else {
    pos = m ? Number(m[1]) : /end of JSON input/.test(message) ? text.length : locateJsonError(text);
    if (pos === undefined) return `Invalid JSON in ${source}: ${message}`;
    const before = text.slice(0, pos);
    line = (before.match(/\n/g) ?? []).length + 1;
    col = pos - (before.lastIndexOf('\n') + 1) + 1;
  }
  const lineText = text.split('\n')[line - 1] ?? '';
  // Show at most 60 characters around the error so minified JSON stays readable.
  const from = Math.max(0, col - 1 - 30);
  const excerpt = lineText.slice(from, from + 60).replace(/\t/g, ' ').replace(/\r$/, '');
  const caret = ' '.repeat(Math.max(0, col - 1 - from)) + '^';
  const at = pos !== undefined ? `line ${line}, column ${col} (character ${pos})` : `line ${line}, column ${col}`;
  return `Invalid JSON in ${source} at ${at}: ${message}\n  ${excerpt}\n  ${caret}`;
}

function readJsonFile(path: string): { text: string } | { error: string } {
  const full = resolve(path);
  try {
    const st = statSync(full);
    if (st.isDirectory()) return { error: `${path} is a directory, not a JSON file` };
    if (st.size > MAX_FILE_BYTES) {
      return { error: `${path} is ${st.size.toLocaleString('en-US')} bytes; json_query reads files up to 64 MiB.` };
    }
    let text = readFileSync(full, 'utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return { text };
  } catch (e) {
    const code = (e as { code?: string } | null)?.code;
    if (code === 'ENOENT') return { error: `File not found: ${path}` };
    if (code === 'EACCES' || code === 'EPERM') return { error: `Permission denied: ${path}` };
    return { error: `Cannot read ${path}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function oneLine(v: unknown): string {
  if (typeof v === 'string' && !/[\r\n]/.test(v)) return v;
  return JSON.stringify(v);
}

// ---------------------------------------------------------------------------

export async function execute(
  _toolCallId: string,
  params: Params,
  _signal?: AbortSignal,
  _onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const { json, path } = params ?? {};
    const query = typeof params?.query === 'string' ? params.query.trim() : '';
    const format = (params?.format ?? 'json').toString().trim().toLowerCase() || 'json';
    if (!FORMATS.includes(format)) {
      return err(`Unknown format "${params.format}". Use one of: ${FORMATS.join(', ')}.`);
    }

    const hasPath = typeof path === 'string' && path.trim() !== '';
    const hasJson = typeof json === 'string' && json.trim() !== '';
    if (hasPath && hasJson) return err('Provide only one of json or path, not both.');
    if (!hasPath && !hasJson) {
      return err('Provide either json (the JSON text) or path (a JSON file to read).');
    }

    let segments: Segment[];
    try {
      segments = parseQuery(query);
    } catch (e) {
      if (e instanceof QueryError) {
        return err(`Invalid query: ${e.message}\n  ${query}\n  ${' '.repeat(e.position)}^`);
      }
      throw e;
    }

    let text: string;
    let source: string;
    if (hasPath) {
      const read = readJsonFile(path as string);
      if ('error' in read) return err(read.error);
      text = read.text;
      source = path as string;
    } else {
      text = json as string;
      source = 'the json input';
    }

    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      return err(describeJsonError(e, text, source));
    }

    let result: { matches: Match[]; fanned: boolean };
    try {
      result = evaluate(doc, segments);
    } catch (e) {
      if (e instanceof PathError) return err(`Path not found: ${e.message}.\nQuery: ${query || '.'}`);
      throw e;
    }
    const values = result.matches.map((m) => m.value);

    let out: string;
    if (format === 'count') {
      out = String(values.length);
    } else if (format === 'lines') {
      out = values.length === 0 ? '(no matches)' : values.map(oneLine).join('\n');
    } else {
      out = JSON.stringify(result.fanned ? values : values[0], null, 2);
    }

    if (out.length > MAX_OUTPUT_CHARS) {
      const total = out.length.toLocaleString('en-US');
      out =
        `${out.slice(0, MAX_OUTPUT_CHARS)}\n... output truncated at ${MAX_OUTPUT_CHARS.toLocaleString('en-US')} ` +
        `of ${total} characters (${values.length} match${values.length === 1 ? '' : 'es'}); ` +
        'narrow the query (e.g. users[*].email instead of users), or use format=count.';
    }
    return ok(out);
  } catch (e) {
    return err(`json_query failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
