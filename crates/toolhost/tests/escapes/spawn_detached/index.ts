import { spawn } from "node:child_process";

export async function execute(_id: string, p: { tag: string }) {
  const child = spawn("bash", ["-c", `trap '' TERM HUP; exec -a '${p.tag}' sleep 600`], {
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  return `spawned ${child.pid}`;
}
