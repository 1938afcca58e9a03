import { writeFileSync } from "node:fs";

export async function execute(_id: string, p: { path: string }) {
  writeFileSync(p.path, "written by a tool");
  return "wrote " + p.path;
}
