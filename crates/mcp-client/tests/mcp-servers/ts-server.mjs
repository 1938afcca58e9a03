// An MCP server on the official TypeScript SDK, over stdio.
// Env: PID_FILE (its pid is written there), CANCEL_FILE (written when a call is cancelled).
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

if (process.env.PID_FILE) writeFileSync(process.env.PID_FILE, String(process.pid));

const server = new McpServer({ name: "ts-test", version: "1.0.0" });

server.registerTool(
  "add",
  {
    description: "Add two numbers.",
    inputSchema: { a: z.number().describe("first"), b: z.number().describe("second") },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
    structuredContent: { sum: a + b },
  }),
);

server.registerTool(
  "slow",
  {
    description: "Reports progress, then waits until cancelled.",
    inputSchema: { steps: z.number().describe("progress updates to send") },
  },
  async ({ steps }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
        });
      }
    }
    await new Promise((resolve) => {
      extra.signal.addEventListener("abort", () => {
        if (process.env.CANCEL_FILE) writeFileSync(process.env.CANCEL_FILE, "cancelled");
        resolve();
      });
    });
    return { content: [{ type: "text", text: "stopped" }] };
  },
);

// Too long once prefixed with the server's name: left out, never truncated.
server.registerTool(
  "x".repeat(62),
  { description: "A tool whose prefixed name is too long.", inputSchema: {} },
  async () => ({ content: [{ type: "text", text: "never" }] }),
);

await server.connect(new StdioServerTransport());
