// The official TypeScript SDK, from the one npm install the tests and benchmarks share
// (tests/mcp-clients, installed by scripts/test or benches/mcp.sh).
const root = new URL('../../tests/mcp-clients/node_modules/', import.meta.url);
const load = (path) => import(new URL(path, root).href);

export const { Client } = await load('@modelcontextprotocol/sdk/dist/esm/client/index.js');
export const { StdioClientTransport } = await load('@modelcontextprotocol/sdk/dist/esm/client/stdio.js');
export const { StreamableHTTPClientTransport } = await load(
  '@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js',
);
export const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
export const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
export const { StreamableHTTPServerTransport } = await load(
  '@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js',
);
export const { isInitializeRequest } = await load('@modelcontextprotocol/sdk/dist/esm/types.js');
export const { z } = await load('zod/index.js');
