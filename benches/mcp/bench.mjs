// MCP round trips: Toolhost (stdio and HTTP) against the same trivial tool served by a
// minimal server on the official TypeScript SDK, measured in one run with the same client;
// then throughput with 32 concurrent HTTP clients. Prints p50, p99 and calls per second.
//
//   node benches/mcp/bench.mjs [--calls N] [--clients 32] [--rounds N] [--only stdio|http]
//                              [--unsandboxed]
//
// The round trip rows call the peer and Toolhost in turn on two open connections, so both
// meet this machine's bursts of noise alike; --rounds N repeats that with fresh servers and
// reports the medians over the rounds (the ratio is the median of the rounds' ratios).

import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client, StdioClientTransport, StreamableHTTPClientTransport } from './sdk.mjs';

// The SDK's HTTP client adds an abort listener per request to one long-lived signal.
setMaxListeners(0);

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '../..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const CALLS = arg('calls', 2000);
const CLIENTS = arg('clients', 32);
const PER_CLIENT = arg('per-client', 200);
const ROUNDS = arg('rounds', 1);
const onlyAt = process.argv.indexOf('--only');
const ONLY = onlyAt > 0 ? process.argv[onlyAt + 1] : null;
const toolhost = process.env.TOOLHOST_BIN ?? join(repo, 'target/release/toolhost');
// --unsandboxed adds a stdio row for Toolhost with the sandbox off, to see what it costs.
const UNSANDBOXED = process.argv.includes('--unsandboxed');

const work = mkdtempSync(join(tmpdir(), 'toolhost-mcp-bench-'));
const tools = join(work, 'tools');
cpSync(join(repo, 'crates/toolhost/tests/fixtures/mcp-tools/echo'), join(tools, 'echo'), {
  recursive: true,
});
const env = {
  ...process.env,
  XDG_CACHE_HOME: join(work, 'cache'),
  XDG_DATA_HOME: join(work, 'data'),
  TOOLHOST_LOG: 'error',
};
delete env.PI_TOOLS_DIRS;
delete env.TOOLHOST_CONFIG;
const unsandboxed = join(work, 'unsandboxed.toml');
writeFileSync(unsandboxed, '[sandbox]\nenabled = false\n');

/** Starts a server that prints its URL (or port) to stderr; resolves with the URL. */
function startHttp(command, args, pattern) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (d) => {
      seen += d;
      const m = seen.match(pattern);
      if (m) resolve({ child, url: m[1].startsWith('http') ? m[1] : `http://127.0.0.1:${m[1]}/mcp` });
    });
    child.on('exit', (code) => reject(new Error(`${command} exited (${code}): ${seen}`)));
  });
}

async function connect(transport) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const echo = (client, i) => client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });

function stats(latencies, wallMs) {
  const sorted = Float64Array.from(latencies).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p99: at(0.99), perSec: (latencies.length / wallMs) * 1000 };
}

/** CLIENTS sessions calling at once, PER_CLIENT calls each. */
async function throughput(url) {
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, () => connect(new StreamableHTTPClientTransport(new URL(url)))),
  );
  await Promise.all(clients.map(async (c) => { for (let i = 0; i < 20; i++) await echo(c, i); }));
  const lat = [];
  const start = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      for (let i = 0; i < PER_CLIENT; i++) {
        const t = performance.now();
        await echo(c, i);
        lat.push(performance.now() - t);
      }
    }),
  );
  const s = stats(lat, performance.now() - start);
  await Promise.all(clients.map((c) => c.close()));
  return s;
}

const rows = [];
const row = (name, s, base) =>
  rows.push({
    name,
    'p50 ms': s.p50.toFixed(3),
    'p99 ms': s.p99.toFixed(3),
    'calls/s': Math.round(s.perSec),
    'p50 vs peer': base ? (s.ratio ?? s.p50 / base.p50).toFixed(2) : '',
    'calls/s vs peer': base ? (s.perSec / base.perSec).toFixed(2) : '',
  });

const median = (xs) => Float64Array.from(xs).sort()[Math.floor(xs.length / 2)];

/**
 * Round trips of the peer (first) and of each other server, all connected at once and
 * called in turn (the order rotating every call), so that all meet the same bursts of
 * machine noise; repeated for ROUNDS rounds with fresh servers. Each ratio is the median
 * of the rounds' p50 ratios to the peer.
 */
async function compare(...connectors) {
  const runs = connectors.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const clients = [];
    for (const c of connectors) clients.push(await c());
    for (const c of clients) for (let i = 0; i < 200; i++) await echo(c, i); // warm up
    const lat = clients.map(() => []);
    for (let i = 0; i < CALLS; i++) {
      for (let j = 0; j < clients.length; j++) {
        const k = (i + j) % clients.length;
        const t = performance.now();
        const r = await echo(clients[k], i);
        lat[k].push(performance.now() - t);
        if (r.content[0].text !== `call ${i}`) throw new Error(`wrong result ${JSON.stringify(r)}`);
      }
    }
    // Calls per second of each side: its calls over the time they took.
    const busy = (l) => l.reduce((a, b) => a + b, 0);
    lat.forEach((l, k) => runs[k].push(stats(l, busy(l))));
    await Promise.all(clients.map((c) => c.close()));
  }
  return runs.map((rs) => ({
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    perSec: median(rs.map((r) => r.perSec)),
    ratio: median(rs.map((r, i) => r.p50 / runs[0][i].p50)),
  }));
}

try {
  if (ONLY !== 'http') {
    const toolhostMcp = (extra) => () =>
      connect(new StdioClientTransport({ command: toolhost, args: ['mcp', '--tools-dir', tools], env: { ...env, ...extra } }));
    const [peerS, thS, offS] = await compare(
      () => connect(new StdioClientTransport({ command: process.execPath, args: [join(here, 'peer_server.mjs'), 'stdio'], env })),
      toolhostMcp({}),
      ...(UNSANDBOXED ? [toolhostMcp({ TOOLHOST_CONFIG: unsandboxed })] : []),
    );
    row('stdio round trip: TS SDK peer', peerS);
    row('stdio round trip: toolhost mcp', thS, peerS);
    if (offS) row('stdio round trip: toolhost mcp, sandbox off', offS, peerS);
  }

  if (ONLY !== 'stdio') {
    const peer = await startHttp(process.execPath, [join(here, 'peer_server.mjs'), 'http'], /listening on (\d+)\n/);
    const th = await startHttp(toolhost, ['serve', '--no-store', '--listen', '127.0.0.1:0', '--tools-dir', tools], /serving MCP at (\S+) /);
    try {
      const [peerH, thH] = await compare(
        () => connect(new StreamableHTTPClientTransport(new URL(peer.url))),
        () => connect(new StreamableHTTPClientTransport(new URL(th.url))),
      );
      row('HTTP round trip: TS SDK peer', peerH);
      row('HTTP round trip: toolhost serve', thH, peerH);
      const peerT = await throughput(peer.url);
      const thT = await throughput(th.url);
      row(`HTTP, ${CLIENTS} clients: TS SDK peer`, peerT);
      row(`HTTP, ${CLIENTS} clients: toolhost serve`, thT, peerT);
    } finally {
      peer.child.kill();
      th.child.kill();
    }
  }
  console.log(`MCP benchmark: echo tool, ${CALLS} sequential calls per round trip row (${ROUNDS} round(s), medians), ${CLIENTS}×${PER_CLIENT} calls for throughput`);
  console.table(rows);
} finally {
  rmSync(work, { recursive: true, force: true });
}
