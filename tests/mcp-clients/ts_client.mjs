// End-to-end checks of a Toolhost MCP server with the official TypeScript SDK.
//
//   node ts_client.mjs '{"transport": "stdio", "bin": ".../toolhost", "args": [...], "home": "...", "tools": "..."}'
//   node ts_client.mjs '{"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "home": "...", "tools": "..."}'
//
// `tools` is the (writable) folder holding the fixture tools `echo` and `slow`; `home` is
// the user's home, where the `slow` tool's abort handler writes its marker. Exits non-zero
// with a message on the first check that fails.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const opts = JSON.parse(process.argv[2]);

function transport() {
  if (opts.transport === 'stdio') {
    return new StdioClientTransport({
      command: opts.bin,
      args: opts.args,
      env: { ...process.env, TOOLHOST_LOG: 'warn' },
      stderr: 'inherit',
    });
  }
  const headers = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};
  return new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers } });
}

async function waitFor(what, check, ms = 10000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

const step = (name) => process.stderr.write(`ts ${opts.transport}: ${name}\n`);

const client = new Client({ name: 'toolhost-e2e', version: '1.0.0' });
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  listChanged += 1;
});
await client.connect(transport());

step('tools/list');
const { tools } = await client.listTools();
assert.deepEqual(
  tools.map((t) => t.name),
  ['echo', 'slow'],
  'tools are listed by name',
);
const echo = tools[0];
assert.equal(echo.title, 'Echo');
assert.match(echo.description, /^Returns the text it is given/);
assert.deepEqual(echo.inputSchema, {
  type: 'object',
  properties: { text: { type: 'string', description: 'What to return.' } },
  required: ['text'],
  additionalProperties: false,
});
const slow = tools[1];
assert.equal(slow.title, 'Slow Steps');
assert.deepEqual(slow.inputSchema.required, ['steps']);
assert.equal(slow.inputSchema.properties.delay_ms.default, 50);
assert.equal(slow.inputSchema.properties.steps.type, 'number');
const again = await client.listTools();
assert.deepEqual(again.tools, tools, 'the listing is deterministic');

step('tools/call');
const hello = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
assert.equal(hello.isError, false);
assert.deepEqual(hello.content, [{ type: 'text', text: 'hello' }]);

step('progress');
const seen = [];
const done = await client.callTool(
  { name: 'slow', arguments: { steps: 4, delay_ms: 20 } },
  CallToolResultSchema,
  { onprogress: (p) => seen.push(p) },
);
assert.equal(done.isError, false, JSON.stringify(done));
assert.deepEqual(done.content, [{ type: 'text', text: 'done 4 steps' }]);
assert.deepEqual(
  seen.map((p) => p.message),
  ['step 1 of 4', 'step 2 of 4', 'step 3 of 4', 'step 4 of 4'],
);
for (let i = 1; i < seen.length; i++) {
  assert.ok(seen[i].progress > seen[i - 1].progress, 'progress increases');
}

step('cancel');
const marker = `aborted-ts-${opts.transport}-${process.pid}`;
const abort = new AbortController();
let started = false;
const cancelled = client
  .callTool(
    { name: 'slow', arguments: { steps: 400, delay_ms: 50, marker } },
    CallToolResultSchema,
    { signal: abort.signal, onprogress: () => (started = true) },
  )
  .then(
    () => 'resolved',
    (e) => e,
  );
await waitFor('the slow call to start', () => started);
abort.abort('enough');
const outcome = await cancelled;
assert.notEqual(outcome, 'resolved', 'a cancelled call rejects');
await waitFor(`the abort handler's marker ${marker}`, () => existsSync(join(opts.home, marker)));

step('invalid params');
const missing = await client.callTool({ name: 'echo', arguments: {} });
assert.equal(missing.isError, true);
assert.match(missing.content[0].text, /text/);
const wrongType = await client.callTool({ name: 'slow', arguments: { steps: 'lots' } });
assert.equal(wrongType.isError, true);
assert.match(wrongType.content[0].text, /steps/);
await assert.rejects(
  client.callTool({ name: 'no_such_tool', arguments: {} }),
  (e) => e instanceof McpError && e.code === -32602,
  'an unknown tool is a JSON-RPC error',
);

step('100 concurrent calls');
const calls = Array.from({ length: 100 }, (_, i) =>
  client.callTool({ name: 'echo', arguments: { text: `call ${i}` } }),
);
const results = await Promise.all(calls);
results.forEach((r, i) => assert.deepEqual(r.content, [{ type: 'text', text: `call ${i}` }]));

step('list_changed');
const toolMd = join(opts.tools, 'echo', 'TOOL.md');
const before = listChanged;
writeFileSync(
  toolMd,
  readFileSync(toolMd, 'utf8').replace(
    'description: Returns the text it is given.',
    'description: Echoes the text back, edited.',
  ),
);
await waitFor('notifications/tools/list_changed', () => listChanged > before);
const edited = await client.listTools();
assert.match(edited.tools.find((t) => t.name === 'echo').description, /^Echoes the text back, edited/);

await client.close();
step('ok');
