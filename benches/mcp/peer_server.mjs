// The baseline: the same `echo` tool served by a minimal server on the official TypeScript
// SDK, the way most Node.js tool hosts serve tools (in-process, no sandbox).
//
//   node peer_server.mjs stdio
//   node peer_server.mjs http     (prints "listening on PORT" to stderr)
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import {
  McpServer,
  StdioServerTransport,
  StreamableHTTPServerTransport,
  isInitializeRequest,
  z,
} from './sdk.mjs';

function server() {
  const s = new McpServer({ name: 'peer', version: '1.0.0' });
  s.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Returns the text it is given. Use it to test a connection.',
      inputSchema: { text: z.string().describe('What to return.') },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return s;
}

if (process.argv[2] === 'stdio') {
  await server().connect(new StdioServerTransport());
} else {
  // Stateful sessions, as Toolhost serves 2025-11-25 clients.
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = id && sessions.get(id);
    if (!transport && req.method === 'POST' && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await server().connect(transport);
    }
    if (!transport) {
      res.writeHead(400).end('no session');
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  http.listen(0, '127.0.0.1', () => {
    process.stderr.write(`listening on ${http.address().port}\n`);
  });
}
