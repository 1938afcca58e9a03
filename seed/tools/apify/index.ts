import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  actor?: string;
  input?: string;
  mode?: string;
  run_id?: string;
  max_items?: number;
  timeout_secs?: number;
  memory_mbytes?: number;
  wait_secs?: number;
  offset?: number;
  output_path?: string;
  api_token?: string;
};

type Run = {
  id: string;
  actId?: string;
  status: string;
  statusMessage?: string;
  startedAt?: string;
  finishedAt?: string;
  defaultDatasetId?: string;
};

const HOME = process.env.HOME || process.env.OFFICER_USER_ROOT || '/officer/user';
const APIFY = 'https://api.apify.com';
// The synchronous endpoint waits at most this long for a run (Apify answers 408 then).
const SYNC_LIMIT_SECS = 300;
const REQUEST_TIMEOUT_MS = 120_000;
const HEARTBEAT_MS = 30_000;
const MAX_INLINE_CHARS = 50_000;
const DEFAULT_PAGE = 1000;
const PREVIEW_ITEMS = 3;

class ToolError extends Error {}

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function apifyResource(): Record<string, unknown> {
  try {
    const all = JSON.parse(process.env.OFFICER_RESOURCES || '{}') as Record<string, unknown>;
    const conf = all?.apify;
    return conf && typeof conf === 'object' ? (conf as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function confString(conf: Record<string, unknown>, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = conf[k];
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  return undefined;
}

type Api = { base: string; token: string };

function apiFrom(params: Params): Api | undefined {
  const conf = apifyResource();
  const token =
    params.api_token?.trim() ||
    process.env.OFFICER_APIFY_TOKEN?.trim() ||
    confString(conf, 'token', 'apiToken', 'api_token', 'apiKey');
  if (!token) return undefined;
  const base = process.env.OFFICER_APIFY_BASE_URL?.trim() || confString(conf, 'baseUrl', 'base_url') || APIFY;
  return { base: base.replace(/\/+$/, ''), token };
}

/** `user/name` → `user~name`, checked, for a URL path. */
function actorPath(actor: string | undefined): string {
  const id = actor?.trim().replace(/^https?:\/\/(console\.)?apify\.com\/(actors\/)?/, '').replace(/\/$/, '');
  if (!id) throw new ToolError('actor is required: the Actor to run, like apify/website-content-crawler (or run_id to fetch a run).');
  const tilde = id.replace('/', '~');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*(~[A-Za-z0-9][A-Za-z0-9._-]*)?$/.test(tilde)) {
    throw new ToolError(`actor "${id}" is not an Actor id: write username~actor-name (or username/actor-name), or the Actor's id.`);
  }
  return tilde;
}

function parseInput(input: string | undefined): string {
  const text = input === undefined || input.trim() === '' ? '{}' : input;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ToolError(
      `input is not valid JSON (${e instanceof Error ? e.message : String(e)}); nothing was sent to Apify. ` +
        'Pass the Actor input as a JSON object, e.g. {"startUrls": [{"url": "https://example.com"}]}.',
    );
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ToolError('input must be a JSON object ({…}), as the Actor\'s input schema describes; nothing was sent to Apify.');
  }
  return JSON.stringify(value);
}

function whole(value: number | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ToolError(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

async function request(
  api: Api,
  method: string,
  path: string,
  query: URLSearchParams,
  body: string | undefined,
  signal: AbortSignal | undefined,
  timeoutMs: number,
  onUpdate: OnUpdate | undefined,
  context: string,
): Promise<{ response: Response; text: string }> {
  if (signal?.aborted) throw new ToolError('Cancelled.');
  const qs = [...query.keys()].length ? `?${query.toString()}` : '';
  const url = `${api.base}${path}${qs}`;
  const timeout = AbortSignal.timeout(timeoutMs);
  const started = Date.now();
  // Long waits report progress, which also keeps the call's idle timer alive.
  const heartbeat = setInterval(() => {
    onUpdate?.({ content: [{ type: 'text', text: `${context}: still waiting for Apify (${Math.round((Date.now() - started) / 1000)} s)…` }] });
  }, HEARTBEAT_MS);
  try {
    const response = await fetch(url, {
      method,
      headers: {
        Authorization: `Bearer ${api.token}`,
        Accept: 'application/json',
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      body,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    return { response, text: await response.text() };
  } catch (e) {
    if (signal?.aborted) throw new ToolError('Cancelled.');
    if (timeout.aborted) throw new ToolError(`Apify did not answer within ${Math.round(timeoutMs / 1000)} s (${method} ${path}). Try mode=async.`);
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    throw new ToolError(
      `Cannot reach Apify at ${api.base} (${e instanceof Error ? e.message : String(e)}${cause}). ` +
        'Check the network, or OFFICER_APIFY_BASE_URL / OFFICER_RESOURCES.apify.baseUrl.',
    );
  } finally {
    clearInterval(heartbeat);
  }
}

/** An actionable message from Apify's `{"error": {"type", "message"}}`. */
function apifyError(status: number, text: string, what: string): string {
  let type = '';
  let message = text.slice(0, 500);
  try {
    const parsed = JSON.parse(text) as { error?: { type?: string; message?: string } };
    type = parsed.error?.type ?? '';
    message = parsed.error?.message ?? message;
  } catch {
    // not JSON: the text itself
  }
  const detail = `${status}${type ? ` ${type}` : ''}: ${message || 'no message'}`;
  switch (status) {
    case 400:
      return `Apify refused the request (${detail}). Fix the input (the Actor's input schema is on its Store page) or the parameter named.`;
    case 401:
      return `Apify rejected the API token (${detail}). Ask the user to check the Apify token in Settings → Integrations → Apify (OFFICER_APIFY_TOKEN), or pass api_token.`;
    case 402:
      return `Apify refused to run it (${detail}): the account's plan or credit does not allow it. The user must check their Apify billing.`;
    case 403:
      return `Apify refused access (${detail}): the token lacks the permission, or the Actor is not available to this account.`;
    case 404:
      return `No ${what} on Apify (${detail}).`;
    case 408:
      return (
        `The Actor run did not finish within ${SYNC_LIMIT_SECS} s (${detail}). Start it again with mode=async, then call with its run_id ` +
        'to wait for it; or ask for less with max_items.'
      );
    case 429:
      return `Apify is rate limiting (${detail}). Wait a little and retry.`;
    default:
      return status >= 500 ? `Apify failed (${detail}). Retry in a moment.` : `Apify answered ${detail}.`;
  }
}

function json<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ToolError(`Apify answered with something that is not JSON: ${text.slice(0, 200)}`);
  }
}

function target(path: string): string {
  return isAbsolute(path) ? path : resolve(HOME, path);
}

function itemsResult(items: unknown[], params: Params, name: string, summary: string): ToolResult {
  const text = JSON.stringify(items, null, 2);
  if (params.output_path || text.length > MAX_INLINE_CHARS) {
    const file = params.output_path
      ? target(params.output_path)
      : join(HOME, 'apify', `${name.replace(/[^A-Za-z0-9._-]/g, '_')}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    const why = params.output_path ? '' : ' (too large to return; pass output_path to choose where)';
    const preview = JSON.stringify(items.slice(0, PREVIEW_ITEMS), null, 2);
    return ok(
      `${summary}, saved to ${file}${why}. The first ${Math.min(PREVIEW_ITEMS, items.length)}:\n\n${preview.slice(0, 5000)}`,
    );
  }
  return ok(`${summary}:\n\n${text}`);
}

function consoleUrl(runId: string): string {
  return `https://console.apify.com/actors/runs/${runId}`;
}

async function runSync(api: Api, params: Params, signal?: AbortSignal, onUpdate?: OnUpdate): Promise<ToolResult> {
  const actor = actorPath(params.actor);
  const input = parseInput(params.input);
  const maxItems = whole(params.max_items, 'max_items', 1, 10_000_000);
  const timeout = whole(params.timeout_secs, 'timeout_secs', 1, SYNC_LIMIT_SECS);
  const memory = whole(params.memory_mbytes, 'memory_mbytes', 128, 32768);
  const q = new URLSearchParams();
  if (timeout !== undefined) q.set('timeout', String(timeout));
  if (memory !== undefined) q.set('memory', String(memory));
  if (maxItems !== undefined) q.set('maxItems', String(maxItems));
  q.set('format', 'json');
  q.set('clean', '1');
  onUpdate?.({ content: [{ type: 'text', text: `Running Actor ${actor} (waiting up to ${SYNC_LIMIT_SECS} s for its items)…` }] });
  const { response, text } = await request(
    api,
    'POST',
    `/v2/acts/${encodeURIComponent(actor)}/run-sync-get-dataset-items`,
    q,
    input,
    signal,
    (SYNC_LIMIT_SECS + 60) * 1000,
    onUpdate,
    `Actor ${actor}`,
  );
  if (!response.ok) throw new ToolError(apifyError(response.status, text, `Actor "${actor}" (check the id: username~actor-name as in its Store URL, or the Actor's id)`));
  const answer = json<unknown>(text);
  if (!Array.isArray(answer)) throw new ToolError(`Apify answered with ${text.slice(0, 200)} where a list of items was expected.`);
  const items = maxItems !== undefined ? answer.slice(0, maxItems) : answer;
  if (!items.length) return ok(`Actor ${actor}: 0 items (the run stored nothing; check the input).`);
  return itemsResult(items, params, actor, `Actor ${actor}: ${items.length} item${items.length === 1 ? '' : 's'}`);
}

async function runAsync(api: Api, params: Params, signal?: AbortSignal, onUpdate?: OnUpdate): Promise<ToolResult> {
  const actor = actorPath(params.actor);
  const input = parseInput(params.input);
  const maxItems = whole(params.max_items, 'max_items', 1, 10_000_000);
  const timeout = whole(params.timeout_secs, 'timeout_secs', 1, 7 * 24 * 3600);
  const memory = whole(params.memory_mbytes, 'memory_mbytes', 128, 32768);
  const q = new URLSearchParams();
  if (timeout !== undefined) q.set('timeout', String(timeout));
  if (memory !== undefined) q.set('memory', String(memory));
  if (maxItems !== undefined) q.set('maxItems', String(maxItems));
  const { response, text } = await request(
    api,
    'POST',
    `/v2/acts/${encodeURIComponent(actor)}/runs`,
    q,
    input,
    signal,
    REQUEST_TIMEOUT_MS,
    onUpdate,
    `Actor ${actor}`,
  );
  if (!response.ok) throw new ToolError(apifyError(response.status, text, `Actor "${actor}" (check the id: username~actor-name as in its Store URL, or the Actor's id)`));
  const run = json<{ data?: Run }>(text).data;
  if (!run?.id) throw new ToolError(`Apify's answer has no run id: ${text.slice(0, 200)}`);
  return ok(
    `Started run ${run.id} of Actor ${actor} (status ${run.status}). Call again with run_id=${run.id} to wait for it and get its items ` +
      `(each call waits up to 60 s). Console: ${consoleUrl(run.id)}`,
  );
}

async function pollRun(api: Api, params: Params, signal?: AbortSignal, onUpdate?: OnUpdate): Promise<ToolResult> {
  const runId = params.run_id?.trim() ?? '';
  if (!/^[A-Za-z0-9]+$/.test(runId)) throw new ToolError(`run_id "${runId}" is not an Apify run id (letters and digits, as mode=async returned it).`);
  const wait = whole(params.wait_secs ?? 60, 'wait_secs', 0, 60) ?? 60;
  const offset = whole(params.offset, 'offset', 0, Number.MAX_SAFE_INTEGER) ?? 0;
  const maxItems = whole(params.max_items, 'max_items', 1, 10_000_000);
  onUpdate?.({ content: [{ type: 'text', text: `Waiting up to ${wait} s for run ${runId}…` }] });
  const got = await request(
    api,
    'GET',
    `/v2/actor-runs/${runId}`,
    new URLSearchParams({ waitForFinish: String(wait) }),
    undefined,
    signal,
    (wait + 60) * 1000,
    onUpdate,
    `Run ${runId}`,
  );
  if (!got.response.ok) throw new ToolError(apifyError(got.response.status, got.text, `run "${runId}" (use the run id that mode=async returned)`));
  const run = json<{ data?: Run }>(got.text).data;
  if (!run) throw new ToolError(`Apify's answer has no run: ${got.text.slice(0, 200)}`);
  if (run.status === 'READY' || run.status === 'RUNNING') {
    return ok(
      `Run ${runId} is still ${run.status}${run.statusMessage ? ` (${run.statusMessage})` : ''}${run.startedAt ? `, started ${run.startedAt}` : ''}. ` +
        `Call again with run_id=${runId} to keep waiting.`,
    );
  }
  if (run.status !== 'SUCCEEDED') {
    return err(
      `Run ${runId} ended with status ${run.status}${run.statusMessage ? `: ${run.statusMessage}` : ''}. Its log: ${consoleUrl(runId)}. ` +
        'Fix the input, or start it again with a larger timeout_secs or memory_mbytes.',
    );
  }
  if (!run.defaultDatasetId) throw new ToolError(`Run ${runId} succeeded but Apify gave no dataset id.`);
  const limit = maxItems ?? (params.output_path ? undefined : DEFAULT_PAGE);
  const q = new URLSearchParams({ format: 'json', clean: '1' });
  if (offset) q.set('offset', String(offset));
  if (limit !== undefined) q.set('limit', String(limit));
  const items = await request(
    api,
    'GET',
    `/v2/datasets/${encodeURIComponent(run.defaultDatasetId)}/items`,
    q,
    undefined,
    signal,
    REQUEST_TIMEOUT_MS,
    onUpdate,
    `Dataset ${run.defaultDatasetId}`,
  );
  if (!items.response.ok) throw new ToolError(apifyError(items.response.status, items.text, `dataset ${run.defaultDatasetId} of run ${runId}`));
  const list = json<unknown>(items.text);
  if (!Array.isArray(list)) throw new ToolError(`Apify answered with ${items.text.slice(0, 200)} where a list of items was expected.`);
  const total = Number(items.response.headers.get('x-apify-pagination-total') ?? NaN);
  const range = offset || (Number.isFinite(total) && total > offset + list.length) ? ` (items ${offset + 1}-${offset + list.length}${Number.isFinite(total) ? ` of ${total}` : ''})` : '';
  const more =
    Number.isFinite(total) && total > offset + list.length
      ? `; ${total - offset - list.length} more: call again with offset=${offset + list.length}, or output_path with a larger max_items`
      : '';
  if (!list.length) return ok(`Run ${runId} succeeded: 0 items${range}${more}.`);
  return itemsResult(list, params, `run-${runId}`, `Run ${runId} succeeded: ${list.length} item${list.length === 1 ? '' : 's'}${range}${more}`);
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const mode = params.mode || 'sync';
    if (mode !== 'sync' && mode !== 'async') return err(`mode must be sync or async, not "${mode}".`);
    // Everything that can be checked here is checked before any request.
    if (!params.run_id?.trim()) {
      actorPath(params.actor);
      parseInput(params.input);
    }
    const api = apiFrom(params);
    if (!api) {
      return err(
        'Apify is not configured: no API token. Ask the user to add their Apify token in Settings → Integrations → Apify ' +
          '(it reaches tools as OFFICER_APIFY_TOKEN or OFFICER_RESOURCES.apify.token), or pass api_token.',
      );
    }
    if (params.run_id?.trim()) return await pollRun(api, params, signal, onUpdate);
    if (mode === 'async') return await runAsync(api, params, signal, onUpdate);
    return await runSync(api, params, signal, onUpdate);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof ToolError ? message : `Apify failed: ${message}`);
  }
}
