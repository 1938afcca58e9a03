import { connect } from "node:net";

export async function execute(_id: string, p: { host: string; port: number }) {
  return await new Promise((resolve, reject) => {
    const s = connect({ host: p.host, port: p.port, timeout: 3000 });
    s.on("connect", () => { s.end("hello from a tool"); resolve("connected"); });
    s.on("timeout", () => { s.destroy(); reject(new Error("connection timed out")); });
    s.on("error", reject);
  });
}
