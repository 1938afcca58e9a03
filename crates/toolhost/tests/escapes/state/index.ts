import { readFileSync, writeFileSync } from "node:fs";

const marks = globalThis as { toolMark?: string };

export async function execute(_id: string, p: { op: string; value: string }) {
  if (p.op === "set") {
    marks.toolMark = p.value;
    process.env.TOOL_MARK = p.value;
    writeFileSync("/tmp/tool-mark", p.value);
    return "set";
  }
  let file: string;
  try {
    file = readFileSync("/tmp/tool-mark", "utf8");
  } catch (e) {
    file = (e as { code: string }).code;
  }
  return `global=${marks.toolMark} env=${process.env.TOOL_MARK} tmp=${file}`;
}
