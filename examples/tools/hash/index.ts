import { createHash, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  algorithm?: string;
  text?: string;
  path?: string;
  encoding?: string;
  expected?: string;
};

const ALGORITHMS = ['sha256', 'sha512', 'sha1', 'md5'];
const ENCODINGS = ['hex', 'base64'];
const PROGRESS_INTERVAL_MS = 1000;

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** `512 bytes`, `3.4 MiB` */
function shortBytes(n: number): string {
  if (n < 1024) return `${n} byte${n === 1 ? '' : 's'}`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v.toFixed(1)} ${units[u]}`;
}

/** `512 bytes`, `3.4 MiB, 3,565,158 bytes` */
function formatBytes(n: number): string {
  return n < 1024 ? shortBytes(n) : `${shortBytes(n)}, ${n.toLocaleString('en-US')} bytes`;
}

/**
 * Decodes an expected digest written as hex or base64 (standard or URL-safe), tolerating the
 * usual wrappers: `sha256:...` / `sha256-...` prefixes (Docker, SRI) and `sha256sum` output
 * (`<digest>  <file name>`). Returns the raw bytes, or a reason it could not be read.
 */
function decodeExpected(
  input: string,
  algorithm: string,
  digestLength: number,
): { bytes: Buffer; form: string } | { error: string } {
  let s = input.trim().split(/\s+/)[0] ?? '';
  const prefix = /^(sha256|sha512|sha1|md5)[:-]/i.exec(s);
  if (prefix) {
    const named = prefix[1].toLowerCase();
    if (named !== algorithm) {
      return { error: `expected is labelled ${named} but algorithm is ${algorithm}; call again with algorithm=${named}` };
    }
    s = s.slice(prefix[0].length);
  }
  if (/^[0-9a-fA-F]+$/.test(s) && s.length === digestLength * 2) {
    return { bytes: Buffer.from(s, 'hex'), form: 'hex' };
  }
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(s)) {
    const bytes = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === digestLength) return { bytes, form: 'base64' };
  }
  const hexLen = digestLength * 2;
  const b64Len = Math.ceil(digestLength / 3) * 4;
  return {
    error:
      `expected is not a ${algorithm} digest: a ${algorithm} digest is ${hexLen} hex characters or ` +
      `${b64Len} base64 characters, got ${s.length} characters`,
  };
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const algorithm = (params?.algorithm ?? 'sha256').toString().trim().toLowerCase().replace(/-/g, '') || 'sha256';
    if (!ALGORITHMS.includes(algorithm)) {
      return err(`Unsupported algorithm "${params.algorithm}". Use one of: ${ALGORITHMS.join(', ')}.`);
    }
    const encoding = (params.encoding ?? 'hex').toString().trim().toLowerCase() || 'hex';
    if (!ENCODINGS.includes(encoding)) {
      return err(`Unsupported encoding "${params.encoding}". Use one of: ${ENCODINGS.join(', ')}.`);
    }

    const { text, path } = params;
    const hasPath = typeof path === 'string' && path.trim() !== '';
    // An empty text is a legitimate input (its digest is well known) unless a path is given.
    const hasText = typeof text === 'string' && (text !== '' || !hasPath);
    if (hasText && hasPath) return err('Provide only one of text or path, not both.');
    if (!hasText && !hasPath) return err('Provide either text (hashed as UTF-8) or path (a file to hash).');

    const hash = createHash(algorithm);
    let source: string;

    if (hasText) {
      const bytes = Buffer.from(text as string, 'utf8');
      hash.update(bytes);
      source = `text (${formatBytes(bytes.length)} as UTF-8)`;
    } else {
      const full = resolve(path as string);
      let size: number;
      try {
        const st = await stat(full);
        if (st.isDirectory()) return err(`${path} is a directory; hash needs a file.`);
        size = st.size;
      } catch (e) {
        const code = (e as { code?: string } | null)?.code;
        if (code === 'ENOENT') return err(`File not found: ${path}`);
        if (code === 'EACCES' || code === 'EPERM') return err(`Permission denied: ${path}`);
        throw e;
      }
      if (signal?.aborted) return err('hash cancelled before reading the file');

      const stream = createReadStream(full, { highWaterMark: 1024 * 1024 });
      let done = 0;
      let lastReport = Date.now();
      try {
        for await (const chunk of stream) {
          if (signal?.aborted) {
            stream.destroy();
            return err(`hash cancelled after ${shortBytes(done)} of ${shortBytes(size)}`);
          }
          hash.update(chunk as Buffer);
          done += (chunk as Buffer).length;
          if (onUpdate && Date.now() - lastReport >= PROGRESS_INTERVAL_MS) {
            lastReport = Date.now();
            const pct = size > 0 ? Math.min(100, Math.floor((done / size) * 100)) : 100;
            onUpdate({ content: [{ type: 'text', text: `Hashed ${shortBytes(done)} of ${shortBytes(size)} (${pct}%)...` }] });
          }
        }
      } catch (e) {
        const code = (e as { code?: string } | null)?.code;
        if (code === 'EACCES' || code === 'EPERM') return err(`Permission denied: ${path}`);
        if (code === 'EISDIR') return err(`${path} is a directory; hash needs a file.`);
        return err(`Cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (signal?.aborted) return err(`hash cancelled after ${shortBytes(done)} of ${shortBytes(size)}`);
      source = `file ${path} (${formatBytes(done)})`;
    }

    const digestBytes = hash.digest();
    const digest = digestBytes.toString(encoding as 'hex' | 'base64');
    const lines = [`${algorithm} (${encoding}) of ${source}:`, digest];

    const expected = typeof params.expected === 'string' ? params.expected.trim() : '';
    if (!expected) return ok(lines.join('\n'));

    const decoded = decodeExpected(expected, algorithm, digestBytes.length);
    if ('error' in decoded) return err([...lines, '', `Cannot compare: ${decoded.error}.`].join('\n'));

    if (timingSafeEqual(digestBytes, decoded.bytes)) {
      return ok([...lines, '', `MATCH: the digest equals the expected value (given as ${decoded.form}).`].join('\n'));
    }
    return err(
      [
        ...lines,
        '',
        'MISMATCH: the digest differs from the expected value.',
        `  expected: ${decoded.bytes.toString(encoding as 'hex' | 'base64')}`,
        `  actual:   ${digest}`,
        'The content is not what was expected (corrupted or altered download, wrong file, different text or line endings), or the expected value belongs to another algorithm.',
      ].join('\n'),
    );
  } catch (e) {
    return err(`hash failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
