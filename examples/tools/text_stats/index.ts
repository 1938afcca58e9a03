import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  text?: string;
  path?: string;
  words_per_minute?: number;
  top?: number;
};

const MAX_FILE_BYTES = 10 * 1024 * 1024;
const MAX_TOP = 100;

// Common English function words, left out of the "top words" list.
const STOPWORDS = new Set(
  (
    'a about after all also an and any are as at be because been but by can could did do does ' +
    'for from had has have he her him his how i if in into is it its just me more my no not of ' +
    'on one only or our out so some than that the their them then there these they this to up us ' +
    'was we were what when which who will with would you your'
  ).split(' '),
);

// A word: letters/digits, optionally joined by inner apostrophes or hyphens.
const WORD_RE = /[\p{L}\p{N}\p{M}]+(?:['’-][\p{L}\p{N}\p{M}]+)*/gu;

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

/** Accepts numbers, and numeric strings some models send for number inputs. */
function toNumber(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : NaN;
}

function describeFsError(e: unknown, path: string): string {
  const code = (e as { code?: string } | null)?.code;
  if (code === 'ENOENT') return `File not found: ${path}`;
  if (code === 'EACCES' || code === 'EPERM') return `Permission denied: ${path}`;
  if (code === 'EISDIR') return `${path} is a directory, not a file`;
  return `Cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`;
}

function readTextFile(path: string): { text: string } | { error: string } {
  const full = resolve(path);
  let size: number;
  try {
    const st = statSync(full);
    if (st.isDirectory()) return { error: `${path} is a directory, not a file` };
    size = st.size;
  } catch (e) {
    return { error: describeFsError(e, path) };
  }
  if (size > MAX_FILE_BYTES) {
    return { error: `${path} is larger than 10 MiB (${fmt(size)} bytes); analyse a smaller file or an excerpt passed as text.` };
  }
  let buf: Buffer;
  try {
    buf = readFileSync(full);
  } catch (e) {
    return { error: describeFsError(e, path) };
  }
  if (buf.subarray(0, 8192).includes(0)) {
    return { error: `${path} looks like a binary file (it contains NUL bytes); text_stats reads text files only.` };
  }
  let text = buf.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { text };
}

// The three functions below expect line endings normalised to \n.
function countLines(text: string): number {
  if (text === '') return 0;
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.length;
}

function countSentences(text: string): number {
  // Split after terminal punctuation (optionally followed by closing quotes/brackets) and
  // at blank lines; count the pieces that contain at least one word.
  const pieces = text.split(/(?<=[.!?…])["'”’)\]]*(?:\s+|$)|\n\s*\n/u);
  return pieces.filter((p) => /[\p{L}\p{N}]/u.test(p)).length;
}

function countParagraphs(text: string): number {
  return text.split(/\n[ \t]*\n/).filter((p) => p.trim() !== '').length;
}

function formatDuration(minutes: number): string {
  const totalSeconds = Math.round(minutes * 60);
  if (totalSeconds === 0) return '0 s';
  if (totalSeconds < 60) return `${totalSeconds} s`;
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  const parts: string[] = [];
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (s && !h) parts.push(`${s} s`);
  return parts.join(' ');
}

export async function execute(
  _toolCallId: string,
  params: Params,
  _signal?: AbortSignal,
  _onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const { text, path } = params ?? {};
    const hasPath = typeof path === 'string' && path.trim() !== '';
    const hasText = typeof text === 'string' && text !== '';

    if (hasText && hasPath) {
      return err('Provide only one of text or path, not both.');
    }
    if (!hasText && !hasPath) {
      return err('Provide either text (the text to analyse) or path (a text file to read).');
    }

    const wpm = toNumber(params.words_per_minute) ?? 200;
    if (!(wpm > 0)) {
      return err(`words_per_minute must be a positive number (got ${String(params.words_per_minute)}).`);
    }
    const top = toNumber(params.top) ?? 5;
    if (!Number.isInteger(top) || top < 0 || top > MAX_TOP) {
      return err(`top must be a whole number from 0 to ${MAX_TOP} (got ${String(params.top)}).`);
    }

    let body: string;
    let source: string;
    if (hasPath) {
      const read = readTextFile(path as string);
      if ('error' in read) return err(read.error);
      body = read.text;
      source = `${path} (${fmt(Buffer.byteLength(body, 'utf8'))} bytes)`;
    } else {
      body = text as string;
      source = 'inline text';
    }

    const normalized = body.replace(/\r\n?/g, '\n');
    const chars = [...body].length;
    const nonSpace = [...body.replace(/\s+/gu, '')].length;
    const words = body.match(WORD_RE) ?? [];
    const wordCount = words.length;
    const letters = words.reduce((sum, w) => sum + [...w.replace(/['’-]/g, '')].length, 0);
    const avg = wordCount ? letters / wordCount : 0;
    const minutes = wordCount / wpm;

    const lines = [
      `Source: ${source}`,
      `Characters: ${fmt(chars)} (${fmt(nonSpace)} excluding whitespace)`,
      `Words: ${fmt(wordCount)}`,
      `Lines: ${fmt(countLines(normalized))}`,
      `Sentences: ${fmt(countSentences(normalized))}`,
      `Paragraphs: ${fmt(countParagraphs(normalized))}`,
      `Average word length: ${avg.toFixed(2)} characters`,
      `Reading time: ~${formatDuration(minutes)} at ${fmt(wpm)} words per minute`,
    ];

    if (top > 0) {
      const counts = new Map<string, number>();
      for (const w of words) {
        const key = w.toLowerCase().replace(/’/g, "'");
        if (STOPWORDS.has(key) || /^[\p{N}'-]+$/u.test(key)) continue;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      const ranked = [...counts.entries()]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .slice(0, top);
      if (ranked.length === 0) {
        lines.push(wordCount === 0 ? 'Top words: none' : 'Top words: none (every word is a stopword or a number)');
      } else {
        lines.push(`Top ${ranked.length} words:`);
        ranked.forEach(([w, c], i) => lines.push(`  ${i + 1}. ${w} (${fmt(c)})`));
      }
    }

    return ok(lines.join('\n'));
  } catch (e) {
    return err(`text_stats failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
