import { spawn } from "node:child_process";

export async function execute(_id: string, p: { how: string }) {
  if (p.how === "exit") process.exit(0);
  // Something of its own to kill first, so that kill(-1) has a target in the sandbox.
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  await new Promise((ok) => child.on("spawn", ok));
  const ended = new Promise((ok) => child.on("exit", (_code, signal) => ok(signal)));
  process.kill(-1, "SIGKILL");
  return `survived; its child got ${await ended}`;
}
