import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  url: string;
  format?: string;
  start_index?: number;
  max_length?: number;
  timeout_ms?: number;
  output_path?: string;
};

const HOME = process.env.HOME || process.env.OFFICER_USER_ROOT || '/officer/user';
const MAX_BODY = 20 * 1024 * 1024;
const MAX_REDIRECTS = 10;
const DEFAULT_MAX_LENGTH = 20_000;
const LIMIT_MAX_LENGTH = 200_000;
const USER_AGENT = 'Mozilla/5.0 (compatible; OfficerWebFetch/1.0; +https://github.com/)';

class ToolError extends Error {}

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

// ---------------------------------------------------------------------------------------
// A small HTML parser: a tree of elements and text, forgiving as browsers are.

type Node = { tag: string; attrs: Record<string, string>; children: Array<Node | string>; parent?: Node };

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
const RAW = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'noscript', 'template', 'iframe', 'noembed', 'noframes']);
const CLOSES_P = new Set([
  'address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer',
  'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'ul',
]);

const ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', trade: '™', hellip: '…',
  mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»', bull: '•',
  middot: '·', euro: '€', pound: '£', yen: '¥', cent: '¢', sect: '§', para: '¶', deg: '°', times: '×', divide: '÷',
  plusmn: '±', frac12: '½', frac14: '¼', frac34: '¾', shy: '', zwj: '', zwnj: '', thinsp: '\u2009', ensp: '\u2002',
  emsp: '\u2003', auml: 'ä', ouml: 'ö', uuml: 'ü', Auml: 'Ä', Ouml: 'Ö', Uuml: 'Ü', szlig: 'ß', eacute: 'é',
  egrave: 'è', ecirc: 'ê', Eacute: 'É', agrave: 'à', aacute: 'á', acirc: 'â', atilde: 'ã', aring: 'å', ccedil: 'ç',
  Ccedil: 'Ç', iacute: 'í', igrave: 'ì', icirc: 'î', iuml: 'ï', ntilde: 'ñ', Ntilde: 'Ñ', oacute: 'ó', ograve: 'ò',
  ocirc: 'ô', otilde: 'õ', oslash: 'ø', Oslash: 'Ø', uacute: 'ú', ugrave: 'ù', ucirc: 'û', yacute: 'ý', yuml: 'ÿ',
  aelig: 'æ', AElig: 'Æ', iexcl: '¡', iquest: '¿', larr: '←', rarr: '→', uarr: '↑', darr: '↓', harr: '↔',
  check: '✓', hearts: '♥', star: '☆', minus: '−', le: '≤', ge: '≥', ne: '≠', asymp: '≈', infin: '∞',
};

function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z][a-z0-9]*);?/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff) return m;
      // Windows-1252's C1 range, as browsers read it.
      const c1 = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';
      if (code >= 0x80 && code <= 0x9f) return c1[code - 0x80];
      return String.fromCodePoint(code);
    }
    return ENTITIES[e] ?? ENTITIES[e.toLowerCase()] ?? m;
  });
}

function parseAttrs(s: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  const re = /([^\s"'>\/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s))) {
    const name = m[1].toLowerCase();
    if (!(name in attrs)) attrs[name] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return attrs;
}

function parseHtml(html: string): Node {
  const root: Node = { tag: '#root', attrs: {}, children: [] };
  let cur = root;
  const open = (tag: string): Node | undefined => {
    for (let n: Node | undefined = cur; n && n !== root; n = n.parent) if (n.tag === tag) return n;
    return undefined;
  };
  const closeTo = (n: Node) => {
    cur = n.parent ?? root;
  };
  // Implicitly closed elements: closing them when a sibling starts.
  const closeWithin = (tags: string[], stops: string[]) => {
    for (let n: Node | undefined = cur; n && n !== root; n = n.parent) {
      if (stops.includes(n.tag)) return;
      if (tags.includes(n.tag)) {
        closeTo(n);
        return;
      }
    }
  };
  const re = /<!--[\s\S]*?(?:-->|$)|<![^>]*>|<\?[^>]*>|<\/([a-zA-Z][\w:-]*)[^>]*>|<([a-zA-Z][\w:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(html))) {
    if (m.index > last) cur.children.push(decodeEntities(html.slice(last, m.index)));
    last = re.lastIndex;
    if (m[1]) {
      const tag = m[1].toLowerCase();
      const n = open(tag);
      if (n) closeTo(n);
      else if (tag === 'p') cur.children.push({ tag: 'p', attrs: {}, children: [], parent: cur });
      else if (tag === 'br') cur.children.push({ tag: 'br', attrs: {}, children: [], parent: cur });
      continue;
    }
    if (!m[2]) continue; // comment, doctype, processing instruction
    const tag = m[2].toLowerCase();
    const attrs = parseAttrs(m[3] ?? '');
    if (CLOSES_P.has(tag)) closeWithin(['p'], ['button', 'td', 'th', 'li', 'table', 'blockquote', 'div', 'section', 'article', 'main']);
    if (tag === 'li') closeWithin(['li'], ['ul', 'ol', 'menu']);
    if (tag === 'dt' || tag === 'dd') closeWithin(['dt', 'dd'], ['dl']);
    if (tag === 'tr') closeWithin(['tr'], ['table', 'tbody', 'thead', 'tfoot']);
    if (tag === 'td' || tag === 'th') closeWithin(['td', 'th'], ['tr', 'table']);
    if (tag === 'option') closeWithin(['option'], ['select', 'datalist']);
    const node: Node = { tag, attrs, children: [], parent: cur };
    cur.children.push(node);
    if (RAW.has(tag)) {
      const end = html.toLowerCase().indexOf(`</${tag}`, last);
      const stop = end < 0 ? html.length : end;
      node.children.push(tag === 'title' || tag === 'textarea' ? decodeEntities(html.slice(last, stop)) : html.slice(last, stop));
      const close = end < 0 ? html.length : html.indexOf('>', end);
      last = close < 0 ? html.length : close + 1;
      re.lastIndex = last;
      continue;
    }
    if (!VOID.has(tag) && !/\/\s*$/.test(m[3] ?? '')) cur = node;
  }
  if (last < html.length) cur.children.push(decodeEntities(html.slice(last)));
  return root;
}

function find(n: Node, pred: (n: Node) => boolean, out: Node[] = []): Node[] {
  for (const c of n.children) {
    if (typeof c === 'string') continue;
    if (pred(c)) out.push(c);
    find(c, pred, out);
  }
  return out;
}

function textOf(n: Node | string): string {
  if (typeof n === 'string') return n;
  if (n.tag === 'script' || n.tag === 'style') return '';
  return n.children.map(textOf).join(' ');
}

// ---------------------------------------------------------------------------------------
// HTML → Markdown (or plain text).

const DROP = new Set([
  'script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object', 'embed', 'nav', 'footer', 'aside',
  'form', 'button', 'input', 'select', 'textarea', 'dialog', 'head', 'title', 'meta', 'link', 'map', 'audio', 'video',
]);
const DROP_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog']);
const BOILERPLATE = /(^|[\s_-])(cookies?|consent|gdpr|sidebar|advert|ads|adsense|sponsor|share|sharing|social|newsletter|subscribe|breadcrumbs?|related|popup|modal|skip-link|comments?)([\s_-]|$)/i;
const BLOCK = new Set([
  'p', 'div', 'section', 'article', 'main', 'header', 'address', 'figure', 'figcaption', 'details', 'summary', 'dl', 'dt',
  'dd', 'center', 'fieldset', 'body', 'html', 'hgroup', 'caption',
]);

type Ctx = { base: URL; plain: boolean; root: Node; pre: boolean; listDepth: number };

function absolute(href: string | undefined, base: URL): string | undefined {
  if (!href) return undefined;
  const h = href.trim();
  if (!h || /^(javascript|data|vbscript):/i.test(h)) return undefined;
  try {
    return new URL(h, base).href;
  } catch {
    return undefined;
  }
}

function dropped(n: Node, ctx: Ctx): boolean {
  if (n === ctx.root) return false;
  if (DROP.has(n.tag)) return true;
  if (n.tag === 'header' && !['article', 'main', 'section'].includes(ctx.root.tag)) return true;
  if ('hidden' in n.attrs || n.attrs['aria-hidden'] === 'true') return true;
  if (/display\s*:\s*none/i.test(n.attrs.style ?? '')) return true;
  if (DROP_ROLES.has((n.attrs.role ?? '').toLowerCase())) return true;
  const label = `${n.attrs.id ?? ''} ${n.attrs.class ?? ''}`;
  return label.trim() !== '' && BOILERPLATE.test(label) && !['article', 'main', 'body', 'html'].includes(n.tag);
}

function inline(n: Node | string, ctx: Ctx): string {
  if (typeof n === 'string') return ctx.pre ? n : n.replace(/[\s\u00a0]+/g, (w) => (w.includes('\u00a0') && !/[\n\t ]/.test(w) ? '\u00a0' : ' '));
  if (dropped(n, ctx)) return '';
  const inner = () => n.children.map((c) => inline(c, ctx)).join('');
  switch (n.tag) {
    case 'br':
      return '\n';
    case 'a': {
      const text = inner().trim();
      const href = absolute(n.attrs.href, ctx.base);
      if (!text) return '';
      if (!href || ctx.plain || href.startsWith('#')) return text;
      return `[${text.replace(/\]/g, '\\]')}](${href.replace(/\)/g, '%29').replace(/ /g, '%20')})`;
    }
    case 'img': {
      const alt = (n.attrs.alt ?? '').trim();
      const src = absolute(n.attrs.src, ctx.base);
      if (ctx.plain) return alt ? `[${alt}]` : '';
      return src ? `![${alt}](${src.replace(/\)/g, '%29')})` : alt;
    }
    case 'strong':
    case 'b': {
      const t = inner();
      return ctx.plain || !t.trim() ? t : `**${t.trim()}**`;
    }
    case 'em':
    case 'i': {
      const t = inner();
      return ctx.plain || !t.trim() ? t : `*${t.trim()}*`;
    }
    case 'del':
    case 's':
    case 'strike': {
      const t = inner();
      return ctx.plain || !t.trim() ? t : `~~${t.trim()}~~`;
    }
    case 'code':
    case 'kbd':
    case 'samp': {
      const t = textOf(n).replace(/\s+/g, ' ');
      return ctx.plain || ctx.pre ? t : `\`${t}\``;
    }
    default:
      if (BLOCK.has(n.tag) || /^h[1-6]$/.test(n.tag) || ['ul', 'ol', 'table', 'pre', 'blockquote', 'li', 'hr', 'tr'].includes(n.tag)) {
        return `\n\n${block(n, ctx)}\n\n`;
      }
      return inner();
  }
}

function tidy(s: string): string {
  return s
    .split('\n')
    .map((l) => l.replace(/ +/g, ' ').replace(/^ (?=\S)/, '').trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function children(n: Node, ctx: Ctx): string {
  return tidy(n.children.map((c) => inline(c, ctx)).join(''));
}

function block(n: Node, ctx: Ctx): string {
  if (dropped(n, ctx)) return '';
  const h = /^h([1-6])$/.exec(n.tag);
  if (h) {
    const t = children(n, ctx).replace(/\s*\n\s*/g, ' ');
    if (!t) return '';
    return ctx.plain ? t : `${'#'.repeat(Number(h[1]))} ${t}`;
  }
  switch (n.tag) {
    case 'hr':
      return ctx.plain ? '' : '---';
    case 'pre': {
      const t = textOf(n).replace(/^\n/, '').replace(/\s+$/, '');
      if (ctx.plain) return t;
      const lang = /language-([\w+-]+)/.exec(`${n.attrs.class ?? ''} ${find(n, (c) => c.tag === 'code')[0]?.attrs.class ?? ''}`)?.[1] ?? '';
      return `\`\`\`${lang}\n${t}\n\`\`\``;
    }
    case 'blockquote': {
      const t = children(n, ctx);
      return ctx.plain ? t : t.split('\n').map((l) => (l ? `> ${l}` : '>')).join('\n');
    }
    case 'ul':
    case 'ol': {
      const items = n.children.filter((c): c is Node => typeof c !== 'string' && c.tag === 'li');
      let i = Number(n.attrs.start) || 1;
      const sub = { ...ctx, listDepth: ctx.listDepth + 1 };
      return items
        .map((li) => {
          const marker = n.tag === 'ol' ? `${i++}.` : '-';
          const body = children(li, sub);
          if (!body) return '';
          const pad = ' '.repeat(marker.length + 1);
          return `${marker} ${body.split('\n').filter((l) => l.trim()).join(`\n${pad}`)}`;
        })
        .filter(Boolean)
        .join('\n');
    }
    case 'table':
      return table(n, ctx);
    case 'dt':
      return ctx.plain ? children(n, ctx) : `**${children(n, ctx)}**`;
    case 'dd':
      return `: ${children(n, ctx)}`;
    default:
      return children(n, ctx);
  }
}

function table(n: Node, ctx: Ctx): string {
  const rows = find(n, (c) => c.tag === 'tr').filter((tr) => {
    // Rows of this table, not of a nested one.
    for (let p = tr.parent; p; p = p.parent) if (p.tag === 'table') return p === n;
    return false;
  });
  const cells = rows
    .map((tr) =>
      tr.children
        .filter((c): c is Node => typeof c !== 'string' && (c.tag === 'td' || c.tag === 'th'))
        .map((c) => children(c, ctx).replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|')),
    )
    .filter((r) => r.length && r.some((c) => c));
  if (!cells.length) return '';
  if (ctx.plain) return cells.map((r) => r.join('\t')).join('\n');
  const width = Math.max(...cells.map((r) => r.length));
  const line = (r: string[]) => `| ${[...r, ...Array(width - r.length).fill('')].join(' | ')} |`;
  return [line(cells[0]), `|${' --- |'.repeat(width)}`, ...cells.slice(1).map(line)].join('\n');
}

/** The part of the page that is its content: the largest article, else main, else body. */
function contentRoot(doc: Node): Node {
  const articles = find(doc, (n) => n.tag === 'article');
  const size = (n: Node) => textOf(n).replace(/\s+/g, ' ').length;
  if (articles.length) {
    const best = articles.reduce((a, b) => (size(b) > size(a) ? b : a));
    if (size(best) >= 200 || articles.length === 1) return best;
  }
  const main = find(doc, (n) => n.tag === 'main' || (n.attrs.role ?? '').toLowerCase() === 'main');
  if (main.length) return main[0];
  return find(doc, (n) => n.tag === 'body')[0] ?? doc;
}

function htmlTitle(doc: Node): string {
  const t = find(doc, (n) => n.tag === 'title')[0];
  const og = find(doc, (n) => n.tag === 'meta' && (n.attrs.property === 'og:title' || n.attrs.name === 'og:title'))[0];
  return (t ? textOf(t) : og?.attrs.content ?? '').replace(/\s+/g, ' ').trim();
}

function htmlToMarkdown(html: string, url: URL, plain: boolean): { title: string; text: string } {
  const doc = parseHtml(html);
  const baseTag = find(doc, (n) => n.tag === 'base' && !!n.attrs.href)[0];
  let base = url;
  if (baseTag) {
    try {
      base = new URL(baseTag.attrs.href, url);
    } catch {
      // keep the page's own URL
    }
  }
  const root = contentRoot(doc);
  const ctx: Ctx = { base, plain, root, pre: false, listDepth: 0 };
  return { title: htmlTitle(doc), text: tidy(block(root, ctx)) };
}

/** The HTML without scripts, styles, comments and event handlers. */
function cleanHtml(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/\s+on[a-z]+\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '')
    .replace(/\n\s*\n+/g, '\n');
}

// ---------------------------------------------------------------------------------------
// Fetching.

function charsetOf(contentType: string, body: Buffer, html: boolean): string {
  const fromHeader = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1];
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (fromHeader) return fromHeader;
  if (html) {
    const head = body.subarray(0, 4096).toString('latin1');
    const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1];
    if (meta) return meta;
  }
  const xml = /^<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)/i.exec(body.subarray(0, 200).toString('latin1'))?.[1];
  return xml ?? 'utf-8';
}

function decode(body: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset.toLowerCase()).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

function isBinary(type: string, body: Buffer): boolean {
  if (/^(text\/|application\/(json|ld\+json|xml|xhtml\+xml|javascript|ecmascript|x-javascript|rss\+xml|atom\+xml|x-www-form-urlencoded|yaml|x-yaml|toml|csv|sql|graphql|x-sh|x-httpd-php))|\+json|\+xml/i.test(type)) {
    return false;
  }
  if (/^(image|audio|video|font)\/|application\/(octet-stream|zip|gzip|x-tar|x-7z|vnd\.|msword|x-rar|wasm)/i.test(type)) return true;
  // Unknown type: NUL bytes in the first KB mean binary.
  return body.subarray(0, 1024).includes(0);
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

function pdfText(body: Buffer, signal: AbortSignal | undefined): Promise<string> {
  const pdftotext = findProgram('pdftotext');
  if (!pdftotext) {
    throw new ToolError(
      'This URL is a PDF, and pdftotext is not installed to read it: the operator must install the Debian package ' +
        '`poppler-utils`. Meanwhile pass output_path to save the PDF.',
    );
  }
  const work = mkdtempSync(join(tmpdir(), 'web-fetch-'));
  const file = join(work, 'document.pdf');
  writeFileSync(file, body);
  return new Promise<string>((resolvePromise, reject) => {
    const child = spawn(pdftotext, ['-layout', '-enc', 'UTF-8', file, '-'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let errText = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      errText = (errText + d.toString('utf8')).slice(-2000);
    });
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(kill, 120_000);
    signal?.addEventListener('abort', kill, { once: true });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      rmSync(work, { recursive: true, force: true });
      if (signal?.aborted) return reject(new ToolError('Cancelled.'));
      if (code !== 0) return reject(new ToolError(`The PDF could not be read (pdftotext: ${errText.trim().split('\n').slice(-2).join(' ') || `status ${code}`}).`));
      // Pages are separated by form feeds.
      const pages = Buffer.concat(out).toString('utf8').split('\f');
      if (pages.length > 1 && !pages[pages.length - 1].trim()) pages.pop();
      resolvePromise(pages.map((p, i) => `--- page ${i + 1} ---\n${p.replace(/\s+$/, '')}`).join('\n\n'));
    });
  });
}

async function readBody(response: Response, onUpdate: OnUpdate | undefined): Promise<{ body: Buffer; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  let lastUpdate = Date.now();
  if (!response.body) return { body: Buffer.alloc(0), cut };
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value));
    size += value.length;
    if (Date.now() - lastUpdate > 2000) {
      lastUpdate = Date.now();
      onUpdate?.({ content: [{ type: 'text', text: `Downloading: ${(size / 1024).toFixed(0)} KB…` }] });
    }
    if (size > MAX_BODY) {
      cut = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  const body = Buffer.concat(chunks);
  return { body: cut ? body.subarray(0, MAX_BODY) : body, cut };
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  // Below the runtime's default deadline (300 s), so the tool reports its own timeout.
  const timeoutMs = Math.min(Math.max(Number(params.timeout_ms) || 30_000, 1000), 280_000);
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let current = '';
  try {
    const raw = (params.url ?? '').trim();
    if (!raw) return err('url is required: the http:// or https:// address to fetch.');
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:/i.test(raw) ? raw : `https://${raw}`);
    } catch {
      return err(`"${raw}" is not a URL: give an address such as https://example.com/page.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return err(`Only http:// and https:// URLs can be fetched, not ${url.protocol}// (for local files, read them directly).`);
    }
    url.hash = '';
    const format = params.format || 'markdown';
    if (!['markdown', 'text', 'html', 'raw'].includes(format)) return err(`format must be markdown, text, html or raw, not "${format}".`);
    const start = Math.max(0, Math.floor(Number(params.start_index) || 0));
    const maxLength = Math.min(Math.max(1, Math.floor(Number(params.max_length) || DEFAULT_MAX_LENGTH)), LIMIT_MAX_LENGTH);

    // Redirects by hand, to report them.
    const hops: Array<{ from: string; status: number }> = [];
    let response: Response;
    current = url.href;
    for (;;) {
      response = await fetch(current, {
        redirect: 'manual',
        signal: both,
        headers: {
          'User-Agent': USER_AGENT,
          Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,application/pdf,text/plain;q=0.8,*/*;q=0.5',
          'Accept-Language': 'en-US,en;q=0.8,*;q=0.5',
        },
      });
      const location = response.headers.get('location');
      if (![301, 302, 303, 307, 308].includes(response.status) || !location) break;
      await response.body?.cancel().catch(() => undefined);
      if (hops.length >= MAX_REDIRECTS) {
        return err(`${url.href} redirects more than ${MAX_REDIRECTS} times (a redirect loop?); last to ${location}.`);
      }
      hops.push({ from: current, status: response.status });
      const next = new URL(location, current);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') return err(`${current} redirects to ${next.href}, which is not http(s).`);
      current = next.href;
    }
    onUpdate?.({ content: [{ type: 'text', text: `${response.status} from ${current}; reading the body…` }] });
    const { body, cut } = await readBody(response, onUpdate);
    const contentType = response.headers.get('content-type') ?? '';
    const type = contentType.split(';')[0].trim().toLowerCase();

    const header: string[] = [`URL: ${current}`];
    if (hops.length) header.push(`Redirected: ${[...hops.map((h) => h.from), current].join(' → ')} (${hops.map((h) => h.status).join(', ')})`);
    header.push(`Status: ${response.status} ${response.statusText}`.trim());
    if (contentType) header.push(`Content-Type: ${contentType}`);

    const pdf = type === 'application/pdf' || body.subarray(0, 5).toString('latin1') === '%PDF-';
    const html = !pdf && (/html/.test(type) || (!type && /^\s*(<!doctype html|<html)/i.test(body.subarray(0, 512).toString('latin1'))));

    if (!response.ok) {
      let detail = '';
      if (!isBinary(type, body) && !pdf) {
        const text = decode(body, charsetOf(contentType, body, html));
        detail = (html ? htmlToMarkdown(text, new URL(current), true).text : text).replace(/\s+/g, ' ').trim().slice(0, 500);
      }
      const hint =
        response.status === 404 || response.status === 410
          ? 'The page does not exist (any more): check the URL, or search for the page.'
          : response.status === 401 || response.status === 403
            ? 'The server refuses access (a login, a paywall, or it blocks automated clients).'
            : response.status === 429
              ? 'Rate limited: wait before retrying.'
              : response.status >= 500
                ? 'The server failed: retry later.'
                : '';
      return err(`HTTP ${response.status} ${response.statusText} for ${current}. ${hint}${detail ? `\nThe page says: ${detail}` : ''}`.trim());
    }

    const save = params.output_path && params.output_path.trim()
      ? isAbsolute(params.output_path) ? params.output_path : resolve(HOME, params.output_path)
      : undefined;

    let content: string;
    let title = '';
    if (pdf && format !== 'raw') {
      if (save && format === 'html') return err('format=html does not apply to a PDF: use markdown or text, or raw with output_path to save the file.');
      onUpdate?.({ content: [{ type: 'text', text: `Reading the PDF (${body.length} bytes) with pdftotext…` }] });
      content = await pdfText(body, signal);
    } else if (format === 'raw' && (pdf || isBinary(type, body))) {
      if (!save) {
        return err(`${current} is binary (${type || 'unknown type'}, ${body.length} bytes): pass output_path to save it.\n${header.join('\n')}`);
      }
      mkdirSync(dirname(save), { recursive: true });
      writeFileSync(save, body);
      return ok(`${header.join('\n')}\n\nSaved ${body.length} bytes to ${save}${cut ? ` (cut at ${MAX_BODY} bytes)` : ''}.`);
    } else if (isBinary(type, body) && !html) {
      if (!save) {
        return err(
          `${current} is binary (${type || 'unknown type'}, ${body.length} bytes), not text to read: pass output_path to save it.\n${header.join('\n')}`,
        );
      }
      mkdirSync(dirname(save), { recursive: true });
      writeFileSync(save, body);
      return ok(`${header.join('\n')}\n\nSaved ${body.length} bytes (${type || 'binary'}) to ${save}${cut ? ` (cut at ${MAX_BODY} bytes)` : ''}.`);
    } else {
      const text = decode(body, charsetOf(contentType, body, html));
      if (format === 'raw') content = text;
      else if (html && format === 'html') {
        content = cleanHtml(text);
        title = htmlTitle(parseHtml(text));
      } else if (html) {
        const md = htmlToMarkdown(text, new URL(current), format === 'text');
        content = md.text;
        title = md.title;
      } else if (/json/.test(type) || (!type && /^\s*[[{]/.test(text))) {
        try {
          content = JSON.stringify(JSON.parse(text), null, 2);
        } catch {
          content = text;
        }
      } else content = text;
    }
    if (title) header.push(`Title: ${title}`);
    if (cut) header.push(`Note: the body was cut at ${MAX_BODY} bytes.`);

    if (save) {
      mkdirSync(dirname(save), { recursive: true });
      writeFileSync(save, content);
      return ok(`${header.join('\n')}\nSaved ${content.length} characters (${format}) to ${save}. Beginning:\n\n${content.slice(0, 1000)}`);
    }
    if (content.length === 0) return ok(`${header.join('\n')}\n\n(The page has no ${format === 'raw' ? '' : 'readable '}content${html ? '; it may be built by JavaScript' : ''}.)`);
    if (start >= content.length) {
      return err(`start_index ${start} is past the end: the content has ${content.length} characters. Start lower (0 is the beginning).`);
    }
    const end = Math.min(content.length, start + maxLength);
    const piece = content.slice(start, end);
    if (start > 0 || end < content.length) {
      header.push(
        `Characters ${start}-${end} of ${content.length}` +
          (end < content.length ? `; next_start_index: ${end} (call again with start_index=${end} for more)` : ' (the end)'),
      );
    }
    return ok(`${header.join('\n')}\n\n${piece}`);
  } catch (e) {
    if (signal?.aborted) return err('Cancelled.');
    if (timeout.aborted) {
      return err(`${current || params.url} did not answer within ${timeoutMs / 1000} s (timeout_ms): retry with a larger timeout_ms, or later.`);
    }
    if (e instanceof ToolError) return err(e.message);
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    const message = `${e instanceof Error ? e.message : String(e)}${cause}`;
    return err(`Cannot fetch ${current || params.url} (${message}). Check the address; the server may be down or refuse connections.`);
  }
}
