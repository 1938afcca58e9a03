import { mkdirSync, writeFileSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { walk } from './lib/walk.ts';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  root: string;
  pattern: string;
  ignore_case?: boolean;
  glob?: string;
  max_results?: number;
  output_path?: string;
};

type Match = { path: string; line: number; column: number; text: string };

const MAX_FILE_BYTES = 5 * 1024 * 1024;
const BINARY_SNIFF_BYTES = 8 * 1024;
const MAX_LINE_CHARS = 200;
const PROGRESS_EVERY = 200;
const MAX_RESULTS_LIMIT = 100_000;

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : word.endsWith('h') ? 'es' : 's'}`;
}

/**
 * Glob → RegExp. `*` and `?` stay within one path segment, `**` crosses segments,
 * `{ts,tsx}` is an alternation and `[abc]` a character class. A glob without `/` is matched
 * against the file name, one with `/` against the path relative to the root.
 */
function globToRegExp(glob: string): RegExp {
  let re = '';
  let inBraces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i++;
        if (glob[i + 1] === '/') {
          i++;
          re += '(?:.*/)?'; // "**/" matches zero or more directories
        } else {
          re += '.*';
        }
      } else {
        re += '[^/]*';
      }
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) {
        re += '\\[';
      } else {
        let body = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
        if (body[0] === '!') body = `^${body.slice(1)}`;
        re += `[${body}]`;
        i = close;
      }
    } else if (c === '{') {
      inBraces++;
      re += '(?:';
    } else if (c === '}' && inBraces > 0) {
      inBraces--;
      re += ')';
    } else if (c === ',' && inBraces > 0) {
      re += '|';
    } else {
      re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  if (inBraces > 0) throw new Error(`unbalanced "{" in glob "${glob}"`);
  return new RegExp(`^${re}$`);
}

function toNumber(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : NaN;
}

function toBool(value: unknown): boolean {
  return value === true || value === 'true' || value === 1 || value === '1';
}

/**
 * The line without surrounding whitespace, cut to MAX_LINE_CHARS. When the line is too long,
 * the excerpt is taken around the match so the matching text stays visible.
 */
function clip(line: string, matchIndex: number): string {
  const t = line.trim();
  if (t.length <= MAX_LINE_CHARS) return t;
  const at = Math.max(0, matchIndex - (line.length - line.trimStart().length));
  const start = at < MAX_LINE_CHARS - 60 ? 0 : Math.min(at - 60, t.length - (MAX_LINE_CHARS - 1));
  const head = start > 0 ? '…' : '';
  const room = MAX_LINE_CHARS - head.length;
  const body = t.slice(start, start + room);
  return start + room < t.length ? `${head}${body.slice(0, room - 1)}…` : `${head}${body}`;
}

/** Reads a file if it is a text file of acceptable size; otherwise says why not. */
async function readText(path: string): Promise<{ text: string } | { skip: 'large' | 'binary' }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > MAX_FILE_BYTES) return { skip: 'large' };
    const buf = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const { bytesRead } = await handle.read(buf, read, size - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    const data = buf.subarray(0, read);
    if (data.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { skip: 'binary' };
    return { text: data.toString('utf8') };
  } finally {
    await handle.close();
  }
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const rootParam = typeof params?.root === 'string' ? params.root.trim() : '';
    if (!rootParam) return err('root is required: the directory to search, e.g. "." or "/officer/user/project".');
    const pattern = typeof params.pattern === 'string' ? params.pattern : '';
    if (pattern === '') return err('pattern is required: a regular expression such as "TODO|FIXME".');

    const ignoreCase = toBool(params.ignore_case);
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, ignoreCase ? 'i' : '');
    } catch (e) {
      // V8 repeats the pattern in its message ("Invalid regular expression: /x(/: ..."); keep the reason.
      const reason = (e instanceof Error ? e.message : String(e)).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
      return err(
        `Invalid regular expression /${pattern}/: ${reason}. ` +
          'Escape special characters such as ( ) [ ] { } . * + ? with a backslash to match them literally.',
      );
    }

    const maxResults = toNumber(params.max_results) ?? 200;
    if (!Number.isInteger(maxResults) || maxResults < 1 || maxResults > MAX_RESULTS_LIMIT) {
      return err(`max_results must be a whole number from 1 to ${MAX_RESULTS_LIMIT} (got ${String(params.max_results)}).`);
    }

    const glob = typeof params.glob === 'string' ? params.glob.trim() : '';
    let globRe: RegExp | undefined;
    if (glob) {
      try {
        globRe = globToRegExp(glob);
      } catch (e) {
        return err(`Invalid glob: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const globOnPath = glob.includes('/');

    const root = resolve(rootParam);
    try {
      const st = await stat(root);
      if (!st.isDirectory() && !st.isFile()) return err(`root ${rootParam} is neither a directory nor a file.`);
    } catch (e) {
      const code = (e as { code?: string } | null)?.code;
      if (code === 'ENOENT') return err(`root not found: ${rootParam}${root === rootParam ? '' : ` (resolved to ${root})`}.`);
      if (code === 'EACCES' || code === 'EPERM') return err(`Permission denied: ${rootParam}`);
      throw e;
    }

    const matches: Match[] = [];
    const filesWithMatches = new Set<string>();
    let scanned = 0;
    let skippedBinary = 0;
    let skippedLarge = 0;
    let unreadable = 0;
    let truncated = false;

    if (signal?.aborted) return err('search cancelled after 0 files');

    const walker = walk(root, { signal, onError: () => unreadable++ });
    for await (const entry of walker) {
      if (signal?.aborted) return err(`search cancelled after ${scanned} files`);
      if (globRe && !globRe.test(globOnPath ? entry.rel : entry.rel.slice(entry.rel.lastIndexOf('/') + 1))) continue;

      scanned++;
      if (scanned % PROGRESS_EVERY === 0) {
        onUpdate?.({ content: [{ type: 'text', text: `Scanned ${scanned} files, ${matches.length} matches...` }] });
      }

      let file: { text: string } | { skip: 'large' | 'binary' };
      try {
        file = await readText(entry.path);
      } catch {
        unreadable++;
        continue;
      }
      if ('skip' in file) {
        if (file.skip === 'large') skippedLarge++;
        else skippedBinary++;
        continue;
      }

      const lines = file.text.split(/\r?\n/);
      for (let i = 0; i < lines.length; i++) {
        const m = regex.exec(lines[i]);
        if (!m) continue;
        if (matches.length >= maxResults) {
          truncated = true;
          break;
        }
        matches.push({ path: entry.rel, line: i + 1, column: m.index + 1, text: clip(lines[i], m.index) });
        filesWithMatches.add(entry.rel);
      }
      if (truncated) break;
    }
    // The walk may have stopped early because the signal fired.
    if (signal?.aborted) return err(`search cancelled after ${scanned} files`);

    const flags = ignoreCase ? 'i' : '';
    const scope = `${plural(scanned, 'file')} scanned under ${rootParam}${glob ? ` matching ${glob}` : ''}`;
    const outputPath = typeof params.output_path === 'string' ? params.output_path.trim() : '';
    const notes: string[] = [];
    if (truncated) {
      notes.push(
        `Stopped at max_results=${maxResults}; there are more matches. Narrow the pattern or glob, or raise max_results` +
          (outputPath ? '.' : ' (with output_path for big result sets).'),
      );
    }
    const skipped: string[] = [];
    if (skippedBinary) skipped.push(`${skippedBinary} binary`);
    if (skippedLarge) skipped.push(`${skippedLarge} larger than 5 MiB`);
    if (unreadable) skipped.push(`${unreadable} unreadable`);
    if (skipped.length) notes.push(`Skipped: ${skipped.join(', ')}.`);

    const header =
      `${plural(matches.length, 'match')}${truncated ? ' (truncated)' : ''} for /${pattern}/${flags} ` +
      `in ${plural(filesWithMatches.size, 'file')} (${scope}).`;

    if (outputPath) {
      const out = resolve(outputPath);
      const payload = {
        root,
        pattern,
        ignore_case: ignoreCase,
        glob: glob || null,
        files_scanned: scanned,
        truncated,
        matches,
      };
      try {
        mkdirSync(dirname(out), { recursive: true });
        writeFileSync(out, `${JSON.stringify(payload, null, 2)}\n`);
      } catch (e) {
        return err(`${header}\nCannot write output_path ${outputPath}: ${e instanceof Error ? e.message : String(e)}`);
      }
      return ok([`${header}`, `${plural(matches.length, 'match')} saved to ${outputPath}.`, ...notes].join('\n'));
    }

    if (matches.length === 0) {
      return ok([`No matches for /${pattern}/${flags} (${scope}).`, ...notes].join('\n'));
    }
    const body = matches.map((m) => `${m.path}:${m.line}: ${m.text}`);
    return ok([header, '', ...body, ...(notes.length ? ['', ...notes] : [])].join('\n'));
  } catch (e) {
    return err(`file_search failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
