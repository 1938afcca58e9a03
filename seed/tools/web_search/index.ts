type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  query: string;
  max_results?: number;
  categories?: string;
  engines?: string;
  language?: string;
  time_range?: string;
  safesearch?: string;
  page?: number;
  searxng_url?: string;
};

type Result = {
  url?: string;
  title?: string;
  content?: string;
  engine?: string;
  engines?: string[];
  publishedDate?: string | null;
  category?: string;
};

type Infobox = {
  infobox?: string;
  id?: string;
  content?: string;
  urls?: Array<{ title?: string; url?: string }>;
  attributes?: Array<{ label?: string; value?: string }>;
};

type Answer = string | { answer?: string; url?: string | null };

type Response = {
  query?: string;
  number_of_results?: number;
  results?: Result[];
  answers?: Answer[];
  corrections?: string[];
  infoboxes?: Infobox[];
  suggestions?: string[];
  unresponsive_engines?: Array<[string, string] | string[]>;
};

const TIMEOUT_MS = 20_000;
const MAX_RESULTS = 50;
const SNIPPET_CHARS = 400;

class ToolError extends Error {}

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The instance: the parameter, then PI_SEARXNG_URL, then OFFICER_RESOURCES. */
function instance(params: Params): string {
  let configured = params.searxng_url?.trim() || process.env.PI_SEARXNG_URL?.trim();
  if (!configured) {
    try {
      const resources = JSON.parse(process.env.OFFICER_RESOURCES || '{}') as Record<string, unknown>;
      for (const key of ['searxng', 'web-search', 'web_search']) {
        const r = resources[key];
        if (typeof r === 'string' && r.trim()) configured = r.trim();
        else if (r && typeof r === 'object') {
          const o = r as Record<string, unknown>;
          const url = o.url ?? o.baseUrl ?? o.base_url ?? o.endpoint;
          if (typeof url === 'string' && url.trim()) configured = url.trim();
        }
        if (configured) break;
      }
    } catch {
      // not JSON: as if absent
    }
  }
  if (!configured) {
    throw new ToolError(
      'No SearXNG instance is configured: the operator must set the environment variable PI_SEARXNG_URL to its base URL ' +
        '(in Toolhost: [env] PI_SEARXNG_URL = "http://…" in toolhost.toml; in Officer: Settings → Integrations), ' +
        'or pass searxng_url.',
    );
  }
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    throw new ToolError(`The SearXNG URL "${configured}" is not a URL: it should look like http://searxng:8080.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError(`The SearXNG URL "${configured}" must start with http:// or https://.`);
  }
  // A base URL, or one already ending in /search.
  return url.origin + url.pathname.replace(/\/+$/, '').replace(/\/search$/, '');
}

function clean(s: string | undefined | null): string {
  return (s ?? '').replace(/\s+/g, ' ').trim();
}

function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

function failedEngines(r: Response): string[] {
  return (r.unresponsive_engines ?? []).map((e) => (Array.isArray(e) ? `${e[0]} (${e[1] ?? 'no reason'})` : String(e)));
}

function render(r: Response, query: string, max: number, page: number): { text: string; empty: boolean } {
  const results = (r.results ?? []).filter((x) => x.url).slice(0, max);
  const lines: string[] = [];
  const total = r.number_of_results ? `, about ${r.number_of_results.toLocaleString('en-US')} in all` : '';
  lines.push(`Search: "${query}" (page ${page}): ${results.length} result${results.length === 1 ? '' : 's'} shown${total}`);
  results.forEach((x, i) => {
    lines.push('');
    lines.push(`${i + 1}. ${clean(x.title) || '(no title)'}`);
    lines.push(`   ${x.url}`);
    const snippet = clean(x.content);
    if (snippet) lines.push(`   ${cut(snippet, SNIPPET_CHARS)}`);
    const engines = (x.engines && x.engines.length ? x.engines : x.engine ? [x.engine] : []).join(', ');
    const date = x.publishedDate ? clean(String(x.publishedDate)).slice(0, 10) : '';
    const meta = [engines, date].filter(Boolean).join(' · ');
    if (meta) lines.push(`   [${meta}]`);
  });
  const answers = (r.answers ?? [])
    .map((a) => (typeof a === 'string' ? clean(a) : [clean(a.answer), a.url ? `(${a.url})` : ''].filter(Boolean).join(' ')))
    .filter(Boolean);
  if (answers.length) lines.push('', 'Answers:', ...answers.map((a) => `- ${a}`));
  const boxes = r.infoboxes ?? [];
  if (boxes.length) {
    lines.push('', 'Infoboxes:');
    for (const b of boxes) {
      lines.push(`- ${clean(b.infobox) || '(untitled)'}${b.id ? ` <${b.id}>` : ''}`);
      if (b.content) lines.push(`  ${cut(clean(b.content), 800)}`);
      for (const a of (b.attributes ?? []).slice(0, 12)) {
        if (a.label && a.value) lines.push(`  ${clean(a.label)}: ${clean(String(a.value))}`);
      }
      for (const u of (b.urls ?? []).slice(0, 6)) if (u.url) lines.push(`  ${clean(u.title) || 'link'}: ${u.url}`);
    }
  }
  if (r.suggestions?.length) lines.push('', `Suggestions: ${r.suggestions.map(clean).join(' | ')}`);
  if (r.corrections?.length) lines.push('', `Did you mean: ${r.corrections.map(clean).join(' | ')}`);
  const failed = failedEngines(r);
  const empty = results.length === 0 && answers.length === 0 && boxes.length === 0;
  if (failed.length) lines.push('', `Engines that failed: ${failed.join(', ')}`);
  return { text: lines.join('\n'), empty };
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  _onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const query = (params.query ?? '').trim();
    if (!query) return err('query is required: what to search for.');
    const base = instance(params);
    const page = Math.max(1, Math.floor(Number(params.page) || 1));
    const max = Math.min(Math.max(1, Math.floor(Number(params.max_results) || 10)), MAX_RESULTS);

    const qs = new URLSearchParams({ q: query, format: 'json', pageno: String(page) });
    const list = (s: string | undefined) =>
      (s ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
        .join(',');
    if (list(params.categories)) qs.set('categories', list(params.categories));
    if (list(params.engines)) qs.set('engines', list(params.engines));
    if (params.language?.trim()) qs.set('language', params.language.trim());
    if (params.time_range) {
      if (!['day', 'week', 'month', 'year'].includes(params.time_range)) {
        return err(`time_range must be day, week, month or year, not "${params.time_range}".`);
      }
      qs.set('time_range', params.time_range);
    }
    if (params.safesearch !== undefined && params.safesearch !== null && String(params.safesearch) !== '') {
      if (!['0', '1', '2'].includes(String(params.safesearch))) return err('safesearch must be 0, 1 or 2.');
      qs.set('safesearch', String(params.safesearch));
    }
    const url = `${base}/search?${qs}`;

    const timeout = AbortSignal.timeout(TIMEOUT_MS);
    let response: globalThis.Response;
    let body: string;
    try {
      response = await fetch(url, {
        headers: { Accept: 'application/json', 'User-Agent': 'Officer web_search (SearXNG JSON API)' },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      body = await response.text();
    } catch (e) {
      if (signal?.aborted) return err('Cancelled.');
      if (timeout.aborted) return err(`SearXNG at ${base} did not answer within ${TIMEOUT_MS / 1000} s: retry, or search for something narrower.`);
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
      return err(
        `Cannot reach SearXNG at ${base} (${e instanceof Error ? e.message : String(e)}${cause}). ` +
          'Is the instance running, and is PI_SEARXNG_URL its address?',
      );
    }

    if (response.status === 403) {
      return err(
        `SearXNG at ${base} refused JSON output (403 Forbidden): \`json\` is not in the instance's search.formats. ` +
          'The operator must add it to settings.yml (search: formats: [html, json]) and restart SearXNG; retrying will not help.',
      );
    }
    if (response.status === 429) {
      const retry = response.headers.get('retry-after');
      return err(
        `SearXNG's bot limiter refused the request (429 Too Many Requests)${retry ? `; it asks to retry after ${retry} s` : ''}. ` +
          'Wait a minute before searching again. The operator can exempt this machine (pass_ip in limiter.toml) ' +
          'or turn off server.limiter in settings.yml for a private instance.',
      );
    }
    if (!response.ok) {
      return err(`SearXNG at ${base} answered ${response.status} ${response.statusText}: ${cut(clean(body.replace(/<[^>]*>/g, ' ')), 300)}`);
    }
    let parsed: Response;
    try {
      parsed = JSON.parse(body) as Response;
    } catch {
      const html = /^\s*</.test(body);
      return err(
        `SearXNG at ${base} answered with ${html ? 'an HTML page' : 'something'} instead of JSON` +
          `${html ? ' (is PI_SEARXNG_URL the SearXNG base URL, and is json in its search.formats?)' : ''}: ${cut(clean(body), 200)}`,
      );
    }
    const { text, empty } = render(parsed, query, max, page);
    if (empty) {
      const failed = failedEngines(parsed);
      if (failed.length) {
        return err(
          `No results for "${query}": the search engines failed: ${failed.join(', ')}. ` +
            'Retry later, or choose other engines or categories.' +
            (parsed.suggestions?.length ? `\nSuggestions: ${parsed.suggestions.map(clean).join(' | ')}` : ''),
        );
      }
      const extra = [
        parsed.corrections?.length ? `Did you mean: ${parsed.corrections.map(clean).join(' | ')}` : '',
        parsed.suggestions?.length ? `Suggestions: ${parsed.suggestions.map(clean).join(' | ')}` : '',
      ].filter(Boolean);
      return ok([`No results for "${query}" (page ${page}). Try other words, fewer filters, or page 1.`, ...extra].join('\n'));
    }
    return ok(text);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof ToolError ? message : `Search failed: ${message}`);
  }
}
