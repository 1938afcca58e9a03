import { connect, createServer } from "node:net";

export async function execute(_id: string, p: { host: string; port: number; serve?: boolean }) {
  let port = p.port;
  if (p.serve) {
    // Listen inside the sandbox first, and connect to that.
    const server = createServer((c) => c.end());
    await new Promise<void>((ok, fail) => server.listen(0, p.host, ok).on("error", fail));
    port = (server.address() as { port: number }).port;
    server.unref();
  }
  return await new Promise((resolve, reject) => {
    const s = connect({ host: p.host, port, timeout: 3000 });
    s.on("connect", () => { s.end("hello from a tool"); resolve("connected"); });
    s.on("timeout", () => { s.destroy(); reject(new Error("connection timed out")); });
    s.on("error", reject);
  });
}
