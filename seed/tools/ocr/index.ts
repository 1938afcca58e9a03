import { spawn } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  path: string;
  language?: string;
  pages?: string;
  format?: string;
  provider?: string;
  api_key?: string;
  output_path?: string;
};

type Kind = { mime: string; pdf: boolean };

type Page = { number: number; text: string; method: string; confidence?: number };

const HOME = process.env.HOME || process.env.OFFICER_USER_ROOT || '/officer/user';
const MISTRAL = 'https://api.mistral.ai';
const DEFAULT_MODEL = 'mistral-ocr-latest';
const PAGE_TIMEOUT_MS = 180_000;
const REMOTE_TIMEOUT_MS = 300_000;
const MAX_REMOTE_BYTES = 50 * 1024 * 1024;
// A page whose text layer has fewer visible characters than this is treated as a scan.
const MIN_TEXT_LAYER_CHARS = 16;
const MAX_INLINE_CHARS = 200_000;

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

function need(program: string, pkg: string, why: string): string {
  const found = findProgram(program);
  if (!found) {
    throw new ToolError(
      `${program} is not installed (${why}): install the Debian package \`${pkg}\` (apt-get install ${pkg}), ` +
        'or configure a remote OCR service (Settings → Integrations → optical character recognition).',
    );
  }
  return found;
}

function run(
  bin: string,
  args: string[],
  signal: AbortSignal | undefined,
  timeoutMs = PAGE_TIMEOUT_MS,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    if (signal?.aborted) return reject(new ToolError('Cancelled.'));
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    let errBytes = 0;
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      if (errBytes < 64 * 1024) errs.push(d);
      errBytes += d.length;
    });
    let timedOut = false;
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    signal?.addEventListener('abort', kill, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
    };
    child.on('error', (e) => {
      done();
      reject(e);
    });
    child.on('close', (code) => {
      done();
      if (signal?.aborted) return reject(new ToolError('Cancelled.'));
      if (timedOut) return reject(new ToolError(`${bin} took longer than ${timeoutMs / 1000} s and was stopped.`));
      resolvePromise({
        code: code ?? 1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(errs).toString('utf8'),
      });
    });
  });
}

async function must(bin: string, args: string[], signal: AbortSignal | undefined, what: string): Promise<string> {
  const r = await run(bin, args, signal);
  if (r.code !== 0) {
    throw new ToolError(`${what} failed: ${r.stderr.trim().split('\n').slice(-3).join(' ') || `exit status ${r.code}`}`);
  }
  return r.stdout;
}

/** The file's type, by its first bytes rather than its name. */
function sniff(file: string): Kind | undefined {
  const fd = openSync(file, 'r');
  const b = Buffer.alloc(16);
  try {
    readSync(fd, b, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  const ascii = b.toString('latin1');
  if (ascii.startsWith('%PDF-')) return { mime: 'application/pdf', pdf: true };
  if (b[0] === 0x89 && ascii.slice(1, 4) === 'PNG') return { mime: 'image/png', pdf: false };
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { mime: 'image/jpeg', pdf: false };
  if (ascii.startsWith('II*\0') || ascii.startsWith('MM\0*')) return { mime: 'image/tiff', pdf: false };
  if (ascii.startsWith('GIF8')) return { mime: 'image/gif', pdf: false };
  if (ascii.startsWith('BM')) return { mime: 'image/bmp', pdf: false };
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return { mime: 'image/webp', pdf: false };
  if (/^P[1-6]\s/.test(ascii)) return { mime: 'image/x-portable-anymap', pdf: false };
  return undefined;
}

/** "1-3,5" → [1, 2, 3, 5] within 1..count. */
function pageList(spec: string | undefined, count: number): number[] {
  if (!spec || !spec.trim()) return Array.from({ length: count }, (_, i) => i + 1);
  const pages = new Set<number>();
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^(\d+)(?:\s*-\s*(\d+)?)?$/.exec(part);
    if (!m) throw new ToolError(`pages: cannot read "${part}"; write pages like "1-3,5" or "2-".`);
    const from = Number(m[1]);
    const to = m[2] ? Number(m[2]) : part.includes('-') ? count : from;
    if (from < 1 || to < from || from > count) {
      throw new ToolError(`pages: "${part}" is outside the document's pages 1-${count}.`);
    }
    for (let p = from; p <= Math.min(to, count); p++) pages.add(p);
  }
  return [...pages].sort((a, b) => a - b);
}

type Remote = { baseUrl: string; apiKey?: string; model: string };

/** The remote service: OFFICER_RESOURCES['optical-character-recognition'], the api_key parameter first. */
function remoteConfig(params: Params): Remote | undefined {
  let resources: Record<string, unknown> = {};
  try {
    resources = JSON.parse(process.env.OFFICER_RESOURCES || '{}') as Record<string, unknown>;
  } catch {
    resources = {};
  }
  const raw = resources['optical-character-recognition'];
  const conf = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : undefined;
  const str = (...keys: string[]) => {
    for (const k of keys) {
      const v = conf?.[k];
      if (typeof v === 'string' && v.trim()) return v.trim();
    }
    return undefined;
  };
  const apiKey =
    params.api_key?.trim() ||
    str('apiKey', 'api_key', 'key', 'token') ||
    process.env.OFFICER_OCR_API_KEY ||
    process.env.MISTRAL_API_KEY ||
    undefined;
  const baseUrl = str('baseUrl', 'base_url', 'endpoint', 'url');
  if (!conf && !params.api_key && !process.env.OFFICER_OCR_API_KEY && !process.env.MISTRAL_API_KEY) {
    return undefined;
  }
  return { baseUrl: baseUrl || MISTRAL, apiKey, model: str('model') || DEFAULT_MODEL };
}

async function remoteOcr(
  file: string,
  kind: Kind,
  remote: Remote,
  pagesSpec: string | undefined,
  signal: AbortSignal | undefined,
  onUpdate: OnUpdate | undefined,
): Promise<Page[]> {
  if (!remote.apiKey && remote.baseUrl === MISTRAL) {
    throw new ToolError(
      'The remote OCR service needs an API key: pass api_key, or ask the user to add the key in ' +
        'Settings → Integrations → optical character recognition (OFFICER_RESOURCES["optical-character-recognition"].apiKey), ' +
        'or use provider=tesseract for local OCR.',
    );
  }
  const size = statSync(file).size;
  if (size > MAX_REMOTE_BYTES) {
    throw new ToolError(`The file is ${size} bytes; the remote service takes at most ${MAX_REMOTE_BYTES}. Use provider=tesseract, or pages of it.`);
  }
  const data = `data:${kind.mime};base64,${readFileSync(file).toString('base64')}`;
  const body: Record<string, unknown> = {
    model: remote.model,
    document: kind.pdf ? { type: 'document_url', document_url: data } : { type: 'image_url', image_url: data },
    include_image_base64: false,
  };
  if (pagesSpec && kind.pdf) {
    // The service numbers pages from 0; an open range needs the page count, so it is local.
    const count = findProgram('pdfinfo') ? await pdfPages(file, signal) : undefined;
    if (count === undefined && /-\s*(,|$)/.test(pagesSpec)) {
      throw new ToolError('pages: an open range like "2-" needs pdfinfo (Debian package poppler-utils); give the last page.');
    }
    body.pages = pageList(pagesSpec, count ?? 100_000).map((p) => p - 1);
  }
  const base = remote.baseUrl.replace(/\/+$/, '');
  const url = /\/v1$/.test(base) ? `${base}/ocr` : `${base}/v1/ocr`;
  onUpdate?.({ content: [{ type: 'text', text: `Sending ${file} (${size} bytes) to ${new URL(url).host} for OCR…` }] });
  const timeout = AbortSignal.timeout(REMOTE_TIMEOUT_MS);
  const signals = signal ? [signal, timeout] : [timeout];
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        ...(remote.apiKey ? { Authorization: `Bearer ${remote.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.any(signals),
    });
  } catch (e) {
    if (signal?.aborted) throw new ToolError('Cancelled.');
    if (timeout.aborted) throw new ToolError(`The OCR service at ${url} did not answer within ${REMOTE_TIMEOUT_MS / 1000} s.`);
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    throw new ToolError(
      `Cannot reach the OCR service at ${url} (${e instanceof Error ? e.message : String(e)}${cause}). ` +
        'Check its address (baseUrl) in Settings → Integrations, or use provider=tesseract.',
    );
  }
  const text = await response.text();
  if (!response.ok) {
    const hint =
      response.status === 401 || response.status === 403
        ? ' The API key was rejected: ask the user to check it in Settings → Integrations.'
        : response.status === 429
          ? ' Rate limited: wait and retry, or use provider=tesseract.'
          : '';
    throw new ToolError(`The OCR service answered ${response.status}: ${text.slice(0, 500)}${hint}`);
  }
  let parsed: { pages?: Array<{ index?: number; markdown?: string }> };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ToolError(`The OCR service answered with something that is not JSON: ${text.slice(0, 200)}`);
  }
  if (!Array.isArray(parsed.pages)) {
    throw new ToolError(`The OCR service's answer has no pages: ${text.slice(0, 200)}`);
  }
  return parsed.pages.map((p, i) => ({
    number: (typeof p.index === 'number' ? p.index : i) + 1,
    text: p.markdown ?? '',
    method: `remote (${remote.model})`,
  }));
}

async function pdfPages(file: string, signal: AbortSignal | undefined): Promise<number> {
  const pdfinfo = need('pdfinfo', 'poppler-utils', 'it reads a PDF');
  const r = await run(pdfinfo, [file], signal);
  if (r.code !== 0) {
    const why = r.stderr.trim();
    if (/incorrect password|encrypt/i.test(why)) throw new ToolError(`${file} is encrypted; ask the user for an unlocked copy.`);
    throw new ToolError(`${file} is not a readable PDF: ${why.split('\n').slice(-2).join(' ')}`);
  }
  const m = /^Pages:\s+(\d+)/m.exec(r.stdout);
  if (!m) throw new ToolError(`pdfinfo did not report the page count of ${file}.`);
  return Number(m[1]);
}

async function checkLanguages(tesseract: string, language: string, signal: AbortSignal | undefined): Promise<void> {
  const r = await run(tesseract, ['--list-langs'], signal);
  const have = new Set(
    `${r.stdout}\n${r.stderr}`
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('List of')),
  );
  const missing = language.split('+').filter((l) => !have.has(l));
  if (missing.length) {
    const pkgs = missing.map((l) => `tesseract-ocr-${l.toLowerCase().replace(/_/g, '-')}`).join(' ');
    throw new ToolError(
      `tesseract has no data for ${missing.join(', ')}: install the Debian package(s) ${pkgs}. ` +
        `Installed: ${[...have].filter((l) => l !== 'osd').join(', ') || 'none'}.`,
    );
  }
}

function meanConfidence(tsv: string): number | undefined {
  let sum = 0;
  let n = 0;
  for (const line of tsv.split('\n').slice(1)) {
    const cols = line.split('\t');
    if (cols.length < 12 || cols[0] !== '5' || !cols[11].trim()) continue;
    const conf = Number(cols[10]);
    if (conf >= 0) {
      sum += conf;
      n++;
    }
  }
  return n ? Math.round((sum / n) * 10) / 10 : undefined;
}

async function tesseractImage(
  tesseract: string,
  image: string,
  language: string,
  format: string,
  signal: AbortSignal | undefined,
): Promise<{ text: string; confidence?: number }> {
  const args = [image, 'stdout', '-l', language];
  if (format !== 'text') args.push(format);
  const text = await must(tesseract, args, signal, 'tesseract');
  return { text, confidence: format === 'tsv' ? meanConfidence(text) : undefined };
}

async function localOcr(
  file: string,
  kind: Kind,
  params: Params,
  signal: AbortSignal | undefined,
  onUpdate: OnUpdate | undefined,
): Promise<Page[]> {
  const tesseract = need('tesseract', 'tesseract-ocr', 'it does the OCR');
  const language = (params.language || 'eng').trim();
  if (!/^[A-Za-z_]+(\+[A-Za-z_]+)*$/.test(language)) {
    throw new ToolError(`language "${language}" is not a tesseract language list such as eng or eng+deu.`);
  }
  await checkLanguages(tesseract, language, signal);
  const format = params.format || 'text';
  if (!kind.pdf) {
    if (params.pages) throw new ToolError('pages applies to PDFs only; this file is an image.');
    onUpdate?.({ content: [{ type: 'text', text: `Running tesseract (${language}) on the image…` }] });
    const r = await tesseractImage(tesseract, file, language, format, signal);
    return [{ number: 1, text: r.text, method: `tesseract (${language})`, confidence: r.confidence }];
  }
  const count = await pdfPages(file, signal);
  const pages = pageList(params.pages, count);
  const pdftotext = format === 'text' ? need('pdftotext', 'poppler-utils', 'it reads text layers') : undefined;
  const pdftoppm = need('pdftoppm', 'poppler-utils', 'it renders PDF pages for OCR');
  const work = mkdtempSync(join(tmpdir(), 'ocr-'));
  try {
    const out: Page[] = [];
    for (const [i, page] of pages.entries()) {
      if (signal?.aborted) throw new ToolError('Cancelled.');
      if (pdftotext) {
        const layer = await run(pdftotext, ['-layout', '-f', String(page), '-l', String(page), file, '-'], signal);
        if (layer.code === 0 && layer.stdout.replace(/\s/g, '').length >= MIN_TEXT_LAYER_CHARS) {
          onUpdate?.({ content: [{ type: 'text', text: `Page ${page} (${i + 1} of ${pages.length}): text layer` }] });
          out.push({ number: page, text: layer.stdout, method: 'text layer' });
          continue;
        }
      }
      onUpdate?.({ content: [{ type: 'text', text: `Page ${page} (${i + 1} of ${pages.length}): OCR with tesseract (${language})…` }] });
      const prefix = join(work, `page-${page}`);
      await must(pdftoppm, ['-r', '300', '-gray', '-png', '-f', String(page), '-l', String(page), '-singlefile', file, prefix], signal, 'pdftoppm');
      const r = await tesseractImage(tesseract, `${prefix}.png`, language, format, signal);
      rmSync(`${prefix}.png`, { force: true });
      out.push({ number: page, text: r.text, method: `tesseract (${language})`, confidence: r.confidence });
    }
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function render(pages: Page[], pdf: boolean): string {
  if (!pdf && pages.length === 1) {
    const p = pages[0];
    return p.confidence !== undefined ? `mean confidence: ${p.confidence}\n${p.text.trimEnd()}` : p.text.trimEnd();
  }
  return pages
    .map((p) => {
      const conf = p.confidence !== undefined ? `, mean confidence ${p.confidence}` : '';
      return `--- page ${p.number} (${p.method}${conf}) ---\n${p.text.trimEnd()}`;
    })
    .join('\n\n');
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    if (!params.path || !params.path.trim()) return err('path is required: the image or PDF to read.');
    const file = isAbsolute(params.path) ? params.path : resolve(HOME, params.path);
    if (!existsSync(file)) return err(`No such file: ${file}. Paths are relative to the user's home (${HOME}).`);
    if (!statSync(file).isFile()) return err(`${file} is not a file.`);
    const kind = sniff(file);
    if (!kind) {
      return err(
        `${file} is not a supported file: give a PDF or an image (PNG, JPEG, TIFF, GIF, BMP, WebP, PNM). ` +
          'The type is read from the file\'s contents, not its name.',
      );
    }
    const provider = params.provider || 'auto';
    const format = params.format || 'text';
    const remote = remoteConfig(params);
    let pages: Page[];
    let how: string;
    if (provider === 'remote' || (provider === 'auto' && remote)) {
      if (!remote) {
        return err(
          'No remote OCR service is configured: ask the user to add one in Settings → Integrations → optical character recognition ' +
            '(OFFICER_RESOURCES["optical-character-recognition"] with apiKey, and baseUrl/model if not Mistral), pass api_key, ' +
            'or use provider=tesseract.',
        );
      }
      if (format !== 'text') return err(`format=${format} needs tesseract: use provider=tesseract, or format=text.`);
      pages = await remoteOcr(file, kind, remote, params.pages, signal, onUpdate);
      how = `remote service (${remote.model})`;
    } else if (provider === 'tesseract' || provider === 'auto') {
      pages = await localOcr(file, kind, params, signal, onUpdate);
      how = 'local';
    } else {
      return err(`Unknown provider "${provider}": use auto, tesseract or remote.`);
    }
    const text = render(pages, kind.pdf);
    const summary = `${file}: ${pages.length} page${pages.length === 1 ? '' : 's'}, ${how}`;
    if (!text.replace(/\s|-+ page \d+.*---/g, '').trim()) {
      return ok(`${summary}: no text found (a blank page, or an image too small or blurred to read).`);
    }
    if (params.output_path || text.length > MAX_INLINE_CHARS) {
      const target = params.output_path
        ? isAbsolute(params.output_path)
          ? params.output_path
          : resolve(HOME, params.output_path)
        : join(HOME, 'ocr', `${basename(file)}.txt`);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
      const why = params.output_path ? '' : ' (too long to return; pass output_path to choose where)';
      return ok(`${summary}: ${text.length} characters saved to ${target}${why}. Beginning:\n\n${text.slice(0, 1000)}`);
    }
    return ok(`${summary}\n\n${text}`);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof ToolError ? message : `OCR failed: ${message}`);
  }
}
