import { readFileSync } from "node:fs";
import { join } from "node:path";

export async function execute(_id: string, p: { path: string }) {
  // Relative paths are relative to the tool's folder (to follow links placed there).
  const path = p.path.startsWith("/") ? p.path : join(import.meta.dirname, p.path);
  return readFileSync(path, "utf8").slice(0, 400);
}
