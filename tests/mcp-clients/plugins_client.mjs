// Platypus plugins served by `toolhost mcp --agent a`, checked with the official TypeScript
// SDK over stdio.
//
//   node plugins_client.mjs '{"bin": ".../toolhost", "args": ["mcp", "--agent", "a", ...]}'
//
// The agent is granted `generator.progress`, `model-output.outputs` and `slow-tool.timing`
// (the test sets TOOLHOST_PLUGINS and the rest of the environment). Exits non-zero with a
// message on the first check that fails; prints `ts plugins: ok` when every check passed.
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const opts = JSON.parse(process.argv[2]);

// The fixture's 1x1 red PNG (model-output/index.js, PIXEL_PNG_BASE64).
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC';

const step = (name) => process.stderr.write(`ts plugins: ${name}\n`);

const client = new Client({ name: 'toolhost-plugins-e2e', version: '1.0.0' });
// Anything the SDK finds wrong with the server's messages (such as an answer to a request
// it cancelled: "Received a response for an unknown message ID").
const protocolErrors = [];
client.onerror = (e) => protocolErrors.push(String(e?.message ?? e));
const transport = new StdioClientTransport({
  command: opts.bin,
  args: opts.args,
  env: { ...process.env, TOOLHOST_LOG: 'warn' },
  stderr: 'inherit',
});
await client.connect(transport);
// Every message as it came off the wire, in order, before the SDK handles it.
const wire = [];
const handle = transport.onmessage;
transport.onmessage = (message, extra) => {
  wire.push(message);
  handle(message, extra);
};

step('tools/list');
const { tools } = await client.listTools();
assert.deepEqual(
  tools.map((t) => t.name),
  [
    'generator__count',
    'generator__silent',
    'model-output__denied',
    'model-output__fails',
    'model-output__image',
    'model-output__image_file',
    'model-output__report',
    'model-output__soft',
    'slow-tool__echo',
    'slow-tool__wait',
  ],
  'the agent gets its three sets, tools by name',
);
const count = tools.find((t) => t.name === 'generator__count');
assert.equal(count.description, 'Count from 1 up to `to`, reporting each step.');
assert.deepEqual(count.inputSchema, {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    to: { type: 'integer', minimum: 1, maximum: 10, description: 'Where to stop counting' },
  },
  required: ['to'],
  additionalProperties: false,
});
const wait = tools.find((t) => t.name === 'slow-tool__wait');
assert.equal(wait.inputSchema.properties.ms.description, 'How long to wait, in ms');
assert.equal(wait.inputSchema.additionalProperties, false);

step('progress');
const seen = [];
const started = Date.now();
const before = wire.length;
const counted = await client.callTool(
  { name: 'generator__count', arguments: { to: 3 } },
  CallToolResultSchema,
  { onprogress: (p) => seen.push(p) },
);
const took = Date.now() - started;
assert.equal(counted.isError, false, JSON.stringify(counted));
// On the wire: three progress notifications for this call, in order, then its result.
const traffic = wire.slice(before);
const answer = traffic.findIndex((m) => 'result' in m || 'error' in m);
const progress = traffic.slice(0, answer).filter((m) => m.method === 'notifications/progress');
assert.equal(progress.length, 3, `three progress notifications: ${JSON.stringify(traffic)}`);
assert.equal(new Set(progress.map((m) => m.params.progressToken)).size, 1, 'one token');
assert.deepEqual(
  progress.map((m) => JSON.parse(m.params.message)),
  [
    { step: 1, of: 3 },
    { step: 2, of: 3 },
    { step: 3, of: 3 },
  ],
  'each yield is a progress notification',
);
for (let i = 1; i < progress.length; i++) {
  assert.ok(progress[i].params.progress > progress[i - 1].params.progress, 'progress increases');
}
assert.ok(
  traffic.slice(answer + 1).every((m) => m.method !== 'notifications/progress'),
  'no progress after the result',
);
// What `onprogress` got: the same updates. The SDK (1.32.2) runs notification handlers
// in a microtask but handles a response at once, so the last update, when it arrives in
// the same read as the result, reaches no handler (the SDK reports it to `onerror` as
// "a progress notification for an unknown token"): it is then counted from there.
await new Promise((r) => setTimeout(r, 0));
const lateProgress = protocolErrors.filter((e) => e.includes('progress notification for an unknown token'));
protocolErrors.splice(0, protocolErrors.length, ...protocolErrors.filter((e) => !lateProgress.includes(e)));
assert.deepEqual(
  seen.map((p) => JSON.parse(p.message)),
  progress.slice(0, seen.length).map((m) => JSON.parse(m.params.message)),
  'onprogress sees the updates in order',
);
assert.equal(
  seen.length + lateProgress.length,
  3,
  `every update reached onprogress or (the last, racing the result) onerror: ${JSON.stringify(seen)} ${lateProgress}`,
);
assert.ok(seen.length >= 2, `onprogress saw the updates before the last: ${JSON.stringify(seen)}`);
assert.ok(took >= 100, `the yields are 50 ms apart (the call took ${took} ms)`);
assert.deepEqual(counted.structuredContent, { step: 3, of: 3 }, 'the last yield is the result');
assert.equal(counted.content.length, 1);
assert.equal(counted.content[0].type, 'text');
assert.deepEqual(JSON.parse(counted.content[0].text), { step: 3, of: 3 });
assert.doesNotMatch(JSON.stringify(counted), /ignored/, "the generator's return value is discarded");

step('image');
const image = await client.callTool({ name: 'model-output__image', arguments: {} });
assert.equal(image.isError, false, JSON.stringify(image));
assert.deepEqual(image.content, [
  { type: 'text', text: 'a pixel' },
  { type: 'image', data: PIXEL, mimeType: 'image/png' },
]);

step('isError');
const fails = await client.callTool({ name: 'model-output__fails', arguments: {} });
assert.equal(fails.isError, true, JSON.stringify(fails));
assert.deepEqual(fails.content, [{ type: 'text', text: 'boom: the tool failed' }]);

step('cancel');
const abort = new AbortController();
const waitStarted = Date.now();
const waiting = client
  .callTool({ name: 'slow-tool__wait', arguments: { ms: 30000 } }, CallToolResultSchema, {
    signal: abort.signal,
  })
  .then(
    (r) => ({ resolved: r }),
    (e) => ({ rejected: e }),
  );
await new Promise((r) => setTimeout(r, 300));
abort.abort('enough');
const outcome = await waiting;
assert.ok(outcome.rejected, `a cancelled call rejects: ${JSON.stringify(outcome)}`);
// The server is free again at once: the next call answers while the 30 s wait would
// still be running.
const echo = await client.callTool({ name: 'slow-tool__echo', arguments: { text: 'ping' } });
assert.deepEqual(echo.content, [{ type: 'text', text: 'ping' }]);
const cancelTook = Date.now() - waitStarted;
assert.ok(cancelTook < 5000, `the cancelled call ended promptly (${cancelTook} ms)`);
// Give a (wrong) late answer to the cancelled request the time to arrive.
await new Promise((r) => setTimeout(r, 200));
assert.deepEqual(protocolErrors, [], 'no answer to the cancelled request, no protocol error');

await client.close();
step('ok');
