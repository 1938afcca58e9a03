import { readdirSync } from "node:fs";

export async function execute(_id: string, p: { path: string }) {
  return readdirSync(p.path).join("\n") || "(empty)";
}
