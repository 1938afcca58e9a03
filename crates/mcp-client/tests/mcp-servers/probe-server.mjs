// An MCP server (official TypeScript SDK, stdio) that reports what it can reach: the
// tests run it in the sandbox and outside it and compare.
import { readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "probe", version: "1.0.0" });
const text = (t) => ({ content: [{ type: "text", text: t }] });
const attempt = (f) => {
  try {
    return text(`ok: ${f()}`);
  } catch (e) {
    return text(`error: ${e.code ?? e.message}`);
  }
};

server.registerTool(
  "read",
  { description: "Reads a file.", inputSchema: { path: z.string() } },
  async ({ path }) => attempt(() => readFileSync(path, "utf8")),
);

server.registerTool(
  "write",
  { description: "Writes a file.", inputSchema: { path: z.string(), text: z.string() } },
  async ({ path, text: t }) => attempt(() => (writeFileSync(path, t), "written")),
);

server.registerTool(
  "env",
  { description: "Its environment, its working directory and its uid.", inputSchema: {} },
  async () =>
    text(JSON.stringify({ env: process.env, cwd: process.cwd(), uid: process.getuid() })),
);

server.registerTool(
  "connect",
  { description: "Connects to 127.0.0.1:PORT.", inputSchema: { port: z.number() } },
  async ({ port }) =>
    new Promise((resolve) => {
      const socket = connect({ host: "127.0.0.1", port });
      const done = (r) => {
        socket.destroy();
        resolve(text(r));
      };
      socket.setTimeout(5000, () => done("error: timeout"));
      socket.on("connect", () => done("ok: connected"));
      socket.on("error", (e) => done(`error: ${e.code ?? e.message}`));
    }),
);

await server.connect(new StdioServerTransport());
