use std::path::Path;

use super::{ANALYSIS_FAILED, lint_entry};
use crate::diagnostic::{Code, Diagnostic, Severity};

const E: Severity = Severity::Error;
const W: Severity = Severity::Warning;

/// One table row: a source, whether it is TypeScript, and the expected findings as
/// `(code, severity, line, column)` in reading order.
struct Case {
    name: &'static str,
    ts: bool,
    source: &'static str,
    expected: &'static [(Code, Severity, u32, u32)],
}

const fn js(
    name: &'static str,
    source: &'static str,
    expected: &'static [(Code, Severity, u32, u32)],
) -> Case {
    Case {
        name,
        ts: false,
        source,
        expected,
    }
}

const fn ts(
    name: &'static str,
    source: &'static str,
    expected: &'static [(Code, Severity, u32, u32)],
) -> Case {
    Case {
        name,
        ts: true,
        source,
        expected,
    }
}

fn lint(source: &str, typescript: bool) -> Vec<Diagnostic> {
    let path = if typescript {
        "tool/index.ts"
    } else {
        "tool/index.js"
    };
    lint_entry(Path::new(path), source, typescript)
}

fn run_table(cases: &[Case]) {
    let mut failures = Vec::new();
    for case in cases {
        let found = lint(case.source, case.ts);
        let actual: Vec<(Code, Severity, u32, u32)> = found
            .iter()
            .map(|d| {
                let p = d
                    .position
                    .unwrap_or(crate::diagnostic::Position { line: 0, column: 0 });
                (d.code, d.severity, p.line, p.column)
            })
            .collect();
        if actual != case.expected {
            let rendered: Vec<String> = found.iter().map(ToString::to_string).collect();
            failures.push(format!(
                "case `{}`:\n  expected {:?}\n  actual   {:?}\n  {}",
                case.name,
                case.expected,
                actual,
                rendered.join("\n  ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The seed's correct example.
const SEED_EXAMPLE: &str = "\
export async function execute(toolCallId, params, signal, onUpdate) {
  try {
    const result = await doWork(params);
    return { content: [{ type: 'text', text: JSON.stringify(result) }] };
  } catch (error) {
    return { content: [{ type: 'text', text: `Error: ${error.message}` }], isError: true };
  }
}

async function doWork(params) {
  if (!params.query) throw new Error('query is required');
  return { ok: true };
}
";

/// A realistic TypeScript entry file using most of the syntax tools use.
const TYPESCRIPT_TOOL: &str = r#"import { readFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import * as path from 'node:path';

type ToolResult = { content: Array<{ type: 'text'; text: string }>; isError?: boolean };
interface Params<T = string> {
  path?: T;
  limit?: number;
}
enum Mode { Fast = 'fast', Slow = 'slow' }
const enum Level { Low, High }
declare const __VERSION__: string;
namespace Util {
  export const id = <T,>(x: T): T => x;
}

abstract class Base<T> {
  protected constructor(private readonly value: T) {}
  abstract describe(): string;
}

class Reader extends Base<string> {
  constructor(value: string) { super(value); }
  describe(): string { return `reader ${Mode.Fast} ${Level.High}`; }
}

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] } satisfies ToolResult;
}

function first<T extends unknown[]>(items: T): T[number] | undefined {
  return items[0];
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: (partial: ToolResult) => void,
): Promise<ToolResult> {
  try {
    const file = path.resolve(params.path ?? '.') as string;
    const text = readFileSync(file, 'utf8');
    const stats = { size: text.length } as unknown as Pick<Stats, 'size'>;
    onUpdate?.(ok(`read ${stats.size} bytes`));
    if (signal?.aborted) return { content: [{ type: 'text', text: 'aborted' }], isError: true };
    const lines = text.split('\n').slice(0, params.limit ?? 10);
    return ok(`${new Reader(file).describe()}: ${first(lines)!} ${Util.id<number>(1)}`);
  } catch (e: unknown) {
    const message = e instanceof Error ? e.message : String(e);
    return { content: [{ type: 'text', text: message }], isError: true };
  }
}
"#;

#[test]
fn valid_entries_have_no_findings() {
    run_table(&[
        js("seed example", SEED_EXAMPLE, &[]),
        ts("typescript syntax", TYPESCRIPT_TOOL, &[]),
        js(
            "export function",
            "export function execute() { return { content: [] }; }",
            &[],
        ),
        js(
            "export async function",
            "export async function execute() { return ok(); }",
            &[],
        ),
        js(
            "export const arrow",
            "export const execute = async () => ({ content: [] });",
            &[],
        ),
        js(
            "export let function expression",
            "export let execute = function () { return 1; };",
            &[],
        ),
        js(
            "export var arrow with block",
            "export var execute = async (id, p) => { return { content: [] }; };",
            &[],
        ),
        js(
            "export { execute }",
            "async function execute() { return 1; }\nexport { execute };",
            &[],
        ),
        js(
            "export { run as execute }",
            "async function run() { return 1; }\nexport { run as execute };",
            &[],
        ),
        js(
            "export { execute } from",
            "export { execute } from './impl.js';",
            &[],
        ),
        js(
            "export { run as execute } from",
            "export { run as execute } from './impl.js';",
            &[],
        ),
        js(
            "export * from: unknown names",
            "export * from './impl.js';",
            &[],
        ),
        ts(
            "overloads and satisfies",
            "type R = { content: [] };\nexport function execute(a: string): Promise<R>;\n\
             export async function execute(a: any): Promise<R> { return { content: [] } satisfies R; }",
            &[],
        ),
        ts(
            "typed const arrow",
            "type Fn = (...args: unknown[]) => Promise<unknown>;\n\
             export const execute: Fn = (async () => ({ content: [] })) as Fn;",
            &[],
        ),
        js(
            "utf-8 and hashbang",
            "#!/usr/bin/env node\n// héllo wörld\nexport const execute = async () => ({ content: [] });",
            &[],
        ),
    ]);
}

#[test]
fn execute_missing() {
    use Code::{CliEntry, ExecuteMissing};
    run_table(&[
        js(
            "class pattern",
            "export class MyTool {\n  async run() {}\n}\n",
            &[(ExecuteMissing, E, 1, 1)],
        ),
        js(
            "default class",
            "import fs from 'node:fs';\nexport default class Tool {}",
            &[(ExecuteMissing, E, 2, 1)],
        ),
        js(
            "default function",
            "const x = 1;\nexport default async function run() { return x; }",
            &[(ExecuteMissing, E, 2, 1)],
        ),
        js(
            "default object",
            "const x = 1;\n\nexport default { x };",
            &[(ExecuteMissing, E, 3, 1)],
        ),
        js(
            "module.exports = { execute }",
            "async function execute() { return 1; }\nmodule.exports = { execute };",
            &[(ExecuteMissing, E, 2, 1)],
        ),
        js(
            "exports.execute",
            "exports.execute = async () => ({ content: [] });",
            &[(ExecuteMissing, E, 1, 1)],
        ),
        js(
            "module.exports.execute",
            "const a = 1;\n  module.exports.execute = async () => a;",
            &[(ExecuteMissing, E, 2, 3)],
        ),
        js(
            "module.exports = main",
            "function main() {}\nmodule.exports = main;",
            &[(ExecuteMissing, E, 2, 1)],
        ),
        js(
            "CLI entry point",
            "async function main() {}\nif (require.main === module) {\n  main();\n}",
            &[(ExecuteMissing, E, 2, 5)],
        ),
        js(
            "CLI entry point, reversed ==",
            "function main() {}\nif (module == require.main) main();",
            &[(ExecuteMissing, E, 2, 5)],
        ),
        js(
            "class wins over CLI, which still warns",
            "export class T {}\nif (require.main === module) {}",
            &[(ExecuteMissing, E, 1, 1), (CliEntry, W, 2, 5)],
        ),
        js(
            "import.meta.main",
            "async function main() {}\nif (import.meta.main) await main();",
            &[(ExecuteMissing, E, 2, 5)],
        ),
        ts(
            "TypeScript export =",
            "const run = async () => 1;\nexport = { execute: run };",
            &[(ExecuteMissing, E, 2, 1)],
        ),
        js(
            "default identifier",
            "async function run() {}\nexport default run;",
            &[(ExecuteMissing, E, 2, 1)],
        ),
        js(
            "nothing exported",
            "const x = 1;",
            &[(ExecuteMissing, E, 1, 1)],
        ),
        js("empty file", "", &[(ExecuteMissing, E, 1, 1)]),
        js(
            "other named export",
            "export function run() { return 1; }",
            &[(ExecuteMissing, E, 1, 1)],
        ),
        ts(
            "type-only export",
            "type execute = string;\nexport type { execute };",
            &[(ExecuteMissing, E, 1, 1)],
        ),
        ts(
            "declare function",
            "export declare function execute(): void;",
            &[(ExecuteMissing, E, 1, 1)],
        ),
    ]);
}

#[test]
fn execute_missing_messages_name_what_was_found() {
    let message = |source: &str| {
        let found = lint(source, false);
        assert_eq!(found.len(), 1, "{found:?}");
        found[0].message.clone()
    };
    let m = message("export class MyTool {\n  async run() {}\n}\n");
    assert!(m.contains("class pattern `export class MyTool`"), "{m}");
    assert!(
        m.contains("async function execute(toolCallId, params, signal, onUpdate)"),
        "{m}"
    );
    let m = message("exports.execute = async () => 1;");
    assert!(m.contains("CommonJS export `exports.execute = ...`"), "{m}");
    assert!(m.contains("export async function execute"), "{m}");
    let m = message("module.exports = { execute: run };\nfunction run() {}");
    assert!(
        m.contains("CommonJS export `module.exports = { execute }`"),
        "{m}"
    );
    let m = message("export default function run() {}");
    assert!(
        m.contains("default export `export default function run`; name it `execute`"),
        "{m}"
    );
    let m = message("function run() {}\nexport default run;");
    assert!(
        m.contains("`export default run`; export it by name instead: `export { run as execute }`"),
        "{m}"
    );
    let m = message("export default { run() {} };");
    assert!(m.contains("default export `export default { ... }`"), "{m}");
    let m = message("exports[name] = 1;");
    assert!(m.contains("CommonJS export `exports[...] = ...`"), "{m}");
    let m = message("if (require.main === module) {}");
    assert!(
        m.contains("CLI entry point `require.main === module`"),
        "{m}"
    );
    let m = message("const x = 1;");
    assert!(m.starts_with("no named `execute` export"), "{m}");
}

#[test]
fn cli_entry_next_to_execute_is_a_warning() {
    run_table(&[
        js(
            "require.main === module",
            "export async function execute() { return 1; }\nif (require.main === module) { execute(); }",
            &[(Code::CliEntry, W, 2, 5)],
        ),
        js(
            "module !== require.main, nested",
            "export const execute = async () => 1;\nfunction f() {\n  if (module !== require.main) return;\n}",
            &[(Code::CliEntry, W, 3, 7)],
        ),
        js(
            "import.meta.main",
            "export const execute = async () => 1;\nif (import.meta.main) console.log(await execute());",
            &[(Code::CliEntry, W, 2, 5)],
        ),
        js(
            "export * and CLI",
            "export * from './x.js';\nif (require.main == module) {}",
            &[(Code::CliEntry, W, 2, 5)],
        ),
    ]);
    let found = lint(
        "export async function execute() { return 1; }\nif (require.main === module) {}",
        false,
    );
    assert!(
        found[0].message.contains("never runs inside Toolhost"),
        "{}",
        found[0].message
    );
}

#[test]
fn bun_apis() {
    use Code::BunApi;
    run_table(&[
        js(
            "Bun globals",
            "export async function execute() {\n  await Bun.sleep(10);\n  const f = Bun.file('a');\n  \
             await Bun.write('b', 'x');\n  return { content: [] };\n}",
            &[(BunApi, E, 2, 9), (BunApi, E, 3, 13), (BunApi, E, 4, 9)],
        ),
        js(
            "Bun outside execute, computed, bare and optional",
            "const env = Bun.env;\nconst sp = Bun['spawn'];\nconst b = Bun;\nBun?.serve({});\n\
             export const execute = async () => 1;",
            &[
                (BunApi, E, 1, 13),
                (BunApi, E, 2, 12),
                (BunApi, E, 3, 11),
                (BunApi, E, 4, 1),
            ],
        ),
        js(
            "Bun modules",
            "import { $ } from 'bun';\nimport { Database } from 'bun:sqlite';\nconst b = require('bun');\n\
             export { x } from 'bun:test';\nconst m = await import('bun:ffi');\n\
             export async function execute() { return 1; }",
            &[
                (BunApi, E, 1, 19),
                (BunApi, E, 2, 26),
                (BunApi, E, 3, 19),
                (BunApi, E, 4, 19),
                (BunApi, E, 5, 24),
            ],
        ),
        js(
            "local Bun binding",
            "const Bun = { file: (p) => p };\nexport async function execute() { return Bun.file('x'); }",
            &[],
        ),
        js(
            "Bun parameter",
            "export async function execute(_id, { Bun }) { return Bun.sleep(1); }",
            &[],
        ),
        js(
            "typeof Bun feature check",
            "export async function execute() { if (typeof Bun !== 'undefined') {} return 1; }",
            &[],
        ),
        js(
            "other modules",
            "import x from 'bunyan';\nimport y from 'node:fs';\nexport const execute = () => 1;",
            &[],
        ),
        ts(
            "type-only uses are erased",
            "import type { BunFile } from 'bun';\nlet f: Bun.BunFile | undefined;\ntype T = typeof Bun;\n\
             export async function execute(): Promise<BunFile | undefined> { return f; }",
            &[],
        ),
        ts(
            "an ambient declaration does not create Bun",
            "declare const Bun: any;\nexport async function execute() { return Bun.file('x'); }",
            &[(BunApi, E, 2, 42)],
        ),
        ts(
            "import = require",
            "import bun = require('bun');\nexport const execute = () => 1;",
            &[(BunApi, E, 1, 22)],
        ),
        js(
            "columns count characters, not bytes",
            "const s = 'ééé'; Bun.sleep(1);\nexport const execute = () => 1;",
            &[(BunApi, E, 1, 18)],
        ),
    ]);
}

#[test]
fn bun_messages_name_the_node_equivalent() {
    let messages: Vec<String> = lint(
        "Bun.file('a'); Bun.write('a', ''); Bun.sleep(1); Bun.spawn(['ls']); Bun.env.X; Bun.serve({});\n\
         export const execute = () => 1;",
        false,
    )
    .into_iter()
    .map(|d| d.message)
    .collect();
    let expected = [
        ("`Bun.file`", "fs.readFileSync"),
        ("`Bun.write`", "fs.writeFileSync"),
        ("`Bun.sleep`", "setTimeout"),
        ("`Bun.spawn`", "child_process.spawn"),
        ("`Bun.env`", "process.env"),
        ("`Bun.serve`", "Node.js standard library"),
    ];
    assert_eq!(messages.len(), expected.len(), "{messages:?}");
    for (message, (api, alternative)) in messages.iter().zip(expected) {
        assert!(message.starts_with(api), "{message}");
        assert!(
            message.contains("throws ReferenceError in Node.js"),
            "{message}"
        );
        assert!(message.contains(alternative), "{message}");
    }
}

#[test]
fn console_output_without_return() {
    use Code::ConsoleOutput;
    run_table(&[
        js(
            "seed mistake",
            "export async function execute(_id, params) {\n  console.log('result');\n}",
            &[(ConsoleOutput, E, 2, 3)],
        ),
        js(
            "returns too",
            "export async function execute() {\n  console.log('x');\n  return { content: [] };\n}",
            &[],
        ),
        js(
            "return nested in if/try/switch/loop counts",
            "export async function execute(a) {\n  console.info('x');\n  for (;;) { switch (a) { case 1: if (a) { \
             try { return ok(); } finally {} } } }\n}",
            &[],
        ),
        js(
            "return in a nested function does not count",
            "export async function execute() {\n  console.warn('x');\n  [1].map((x) => { return x; });\n  \
             function f() { return 1; }\n}",
            &[(ConsoleOutput, E, 2, 3)],
        ),
        js(
            "console in a nested function does not count",
            "export async function execute() {\n  [1].forEach((x) => console.log(x));\n}",
            &[],
        ),
        js(
            "bare return",
            "export function execute() {\n  console.error('x');\n  return;\n}",
            &[(ConsoleOutput, E, 2, 3)],
        ),
        js(
            "first console call is reported",
            "export function execute() {\n  const a = 1;\n  console.debug(a); console.log(a);\n}",
            &[(ConsoleOutput, E, 3, 3)],
        ),
        js(
            "expression-bodied arrow returns",
            "export const execute = async () => (console.log('x'), { content: [] });",
            &[],
        ),
        js(
            "block arrow",
            "export const execute = async () => {\n  console.debug('x');\n};",
            &[(ConsoleOutput, E, 2, 3)],
        ),
        js(
            "function expression",
            "export const execute = async function () {\n    console.log('x');\n};",
            &[(ConsoleOutput, E, 2, 5)],
        ),
        js(
            "re-exported local function",
            "async function run() {\n  console.log('x');\n}\nexport { run as execute };",
            &[(ConsoleOutput, E, 2, 3)],
        ),
        js(
            "re-exported local arrow",
            "const execute = async () => {\n  console.log('x');\n};\nexport { execute };",
            &[(ConsoleOutput, E, 2, 3)],
        ),
        js(
            "shadowed console",
            "export function execute(console) {\n  console.log('x');\n}",
            &[],
        ),
        js(
            "other console methods",
            "export function execute() {\n  console.table([]);\n}",
            &[],
        ),
    ]);
    let found = lint(
        "export async function execute(_id, params) {\n  console.log('result');\n}",
        false,
    );
    assert_eq!(
        found[0].message,
        "`console.log` output never reaches the agent and `execute` returns nothing; \
         return `{ content: [{ type: 'text', text }] }` instead"
    );
}

#[test]
fn throw_in_execute() {
    use Code::ThrowInExecute;
    run_table(&[
        js(
            "throw at top of execute",
            "export async function execute(_id, params) {\n  if (!params.q) throw new Error('q');\n  return ok();\n}",
            &[(ThrowInExecute, W, 2, 18)],
        ),
        js(
            "throw inside try is handled",
            "export async function execute() {\n  try {\n    throw new Error('x');\n  } catch (e) {\n    return err(e);\n  }\n}",
            &[],
        ),
        js(
            "throw in catch and finally is not",
            "export async function execute() {\n  try {\n    return ok();\n  } catch (e) {\n    throw e;\n  } finally {\n    \
             throw new Error('f');\n  }\n}",
            &[(ThrowInExecute, W, 5, 5), (ThrowInExecute, W, 7, 5)],
        ),
        js(
            "try without catch does not handle",
            "export async function execute() {\n  try {\n    throw new Error('x');\n  } finally {}\n}",
            &[(ThrowInExecute, W, 3, 5)],
        ),
        js(
            "inner catch inside an outer try is handled",
            "export async function execute() {\n  try {\n    try { a(); } catch (e) { throw e; }\n    return ok();\n  } \
             catch (e) {\n    return err(e);\n  }\n}",
            &[],
        ),
        js(
            "throws in nested functions are ignored",
            "export const execute = async () => {\n  const f = () => { throw new Error('x'); };\n  \
             new Promise((_, reject) => { throw 1; });\n  class C { m() { throw 2; } }\n  return ok();\n};",
            &[],
        ),
        js(
            "throw in a helper is ignored",
            "function helper() { throw new Error('x'); }\nexport async function execute() { return helper(); }",
            &[],
        ),
        js(
            "one warning per throw",
            "export async function execute(a) {\n  if (a) throw 1;\n  throw 2;\n}",
            &[(ThrowInExecute, W, 2, 10), (ThrowInExecute, W, 3, 3)],
        ),
    ]);
}

#[test]
fn syntax_errors_stop_other_lints() {
    use Code::EntrySyntax;
    run_table(&[
        js(
            "unclosed parameters",
            "export async function execute( {\n  Bun.file('x');\n",
            &[(EntrySyntax, E, 2, 6)],
        ),
        js(
            "stray token",
            "const a = ;\nconsole.log(Bun.sleep(1));",
            &[(EntrySyntax, E, 1, 11)],
        ),
        ts(
            "type syntax in a .ts file is fine",
            "let a: number = 1;\nexport const execute = () => a;",
            &[],
        ),
        js(
            "type syntax in a .js file is not",
            "let a: number = 1;\nexport const execute = () => a;",
            &[(EntrySyntax, E, 1, 6)],
        ),
        js(
            "redeclaration found by semantic analysis, at the redeclaration",
            "let a = 1;\nlet a = 2;\nexport const execute = () => a;",
            &[(EntrySyntax, E, 2, 5)],
        ),
        js(
            "a duplicate export, at the second",
            "export function execute() {}\nfunction run() {}\nexport { run as execute };",
            &[(EntrySyntax, E, 3, 17)],
        ),
        js(
            "every error is reported",
            "const a = 1\nconst a = 2\nconst b = 3\nconst b = 4\nexport const execute = () => a + b;",
            &[(EntrySyntax, E, 2, 7), (EntrySyntax, E, 4, 7)],
        ),
    ]);
    // The finding carries oxc's own message, unchanged, where oxc found the error.
    let found = lint("const a = ;", false);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].to_string(),
        "tool/index.js:1:11: error[entry-syntax]: Unexpected token"
    );
}

#[test]
fn commonjs_files_parse_as_scripts_when_they_must() {
    // `with` and top-level `return` are not valid in a module but are in CommonJS.
    run_table(&[
        js(
            "with statement",
            "with (obj) {}\nexports.execute = 1;",
            &[(Code::ExecuteMissing, E, 2, 1)],
        ),
        js(
            "top-level return",
            "if (x) return;\nmodule.exports = { run };",
            &[(Code::ExecuteMissing, E, 2, 1)],
        ),
        js(
            "require of bun in CommonJS",
            "const { file } = require('bun');\nmodule.exports.execute = async () => file('x');",
            &[(Code::BunApi, E, 1, 26), (Code::ExecuteMissing, E, 2, 1)],
        ),
    ]);
}

#[test]
fn diagnostics_carry_the_path_and_are_sorted() {
    let source = "Bun.sleep(1);\nexport async function execute() {\n  console.log(Bun.env);\n  throw 1;\n}\n\
                  if (require.main === module) {}";
    let found = lint_entry(Path::new("x/index.js"), source, false);
    assert!(found.iter().all(|d| d.path == Path::new("x/index.js")));
    let keys: Vec<_> = found
        .iter()
        .map(|d| (d.position, d.severity, d.code))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let codes: Vec<Code> = found.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            Code::BunApi,
            Code::ConsoleOutput,
            Code::BunApi,
            Code::ThrowInExecute,
            Code::CliEntry
        ]
    );
}

#[test]
fn never_panics_on_truncated_sources() {
    for (source, typescript) in [
        (TYPESCRIPT_TOOL, true),
        (TYPESCRIPT_TOOL, false),
        (SEED_EXAMPLE, false),
    ] {
        for i in 0..source.len() {
            if source.is_char_boundary(i) {
                let found = lint_entry(Path::new("t/index.ts"), &source[..i], typescript);
                assert!(
                    found
                        .iter()
                        .all(|d| d.position.is_some() && d.message != ANALYSIS_FAILED)
                );
            }
        }
    }
}

#[test]
fn never_panics_on_odd_inputs() {
    let odd = [
        "\u{feff}export const execute = () => 1;",
        "\0\0\0",
        "export { execute as default, x as 'execute' }; const x = () => 1; function execute() {}",
        "export * as execute from './x.js';",
        "export default (class {});",
        "module.exports['execute'] = 1; exports[k] = 2; module['exports'] = 3;",
        "`${`${`${Bun}`}`}`",
        "((((((((((((((((((((((((((((((((((((((((x))))))))))))))))))))))))))))))))))))))))",
        "/* unterminated",
        "'unterminated",
        "export function execute() { return } }",
        "\r\n\r\nexport const execute = () => { console.log(1) }\r\n",
        "é",
    ];
    for source in odd {
        for typescript in [false, true] {
            let found = lint_entry(Path::new("t/index.js"), source, typescript);
            assert!(
                found.iter().all(|d| d.message != ANALYSIS_FAILED),
                "{source:?}: {found:?}"
            );
        }
    }
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    for (open, close) in [("[", "]"), ("(", ")"), ("{", "}"), ("(() => ", ")")] {
        let source = format!(
            "export const execute = () => {}1{};",
            open.repeat(3000),
            close.repeat(3000)
        );
        let found = lint_entry(Path::new("t/index.js"), &source, false);
        assert!(found.is_empty(), "{open}: {found:?}");
        let truncated = open.repeat(5000);
        let found = lint_entry(Path::new("t/index.js"), &truncated, false);
        assert!(
            found
                .iter()
                .all(|d| d.code == Code::EntrySyntax && d.message != ANALYSIS_FAILED)
        );
    }
}
