// An MCP server (official TypeScript SDK, low-level API) whose tools/list answers after
// DELAY_MS milliseconds (default 100), for the turn-resolution benchmark.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const delay = Number(process.env.DELAY_MS ?? 100);
const tools = Array.from({ length: 10 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Benchmark tool ${i}.`,
  inputSchema: { type: "object", properties: { x: { type: "number", description: "x" } } },
}));

const server = new Server({ name: "slow-list", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => {
  await new Promise((r) => setTimeout(r, delay));
  return { tools };
});
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: "text", text: "ok" }] }));
await server.connect(new StdioServerTransport());
