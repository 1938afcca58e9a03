#![allow(clippy::unwrap_used)]
//! The TypeScript transpiler, checked by running its output on real Node.js 20.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};
use toolhost_transpile::{TranspileError, Transpiler};

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Output of `node <args>`; panics with Node's stderr when it fails.
fn node(args: &[&Path]) -> String {
    let out = Command::new("node")
        .args(args)
        .output()
        .expect("`node` (Node.js 20) must be installed to run these tests");
    assert!(
        out.status.success(),
        "node {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `node --enable-source-maps <file>` expected to fail: its stderr.
fn node_failing(file: &Path) -> String {
    let out = Command::new("node")
        .arg("--enable-source-maps")
        .arg(file)
        .output()
        .unwrap();
    assert!(!out.status.success(), "expected {file:?} to throw");
    String::from_utf8(out.stderr).unwrap()
}

/// The cache entry of `source`, located independently of the transpiler: sha256 hex + `.js`.
fn cached(t: &Transpiler, source: &Path) -> PathBuf {
    let entry = t
        .cache_dir()
        .join(format!("{}.js", sha256(&std::fs::read(source).unwrap())));
    assert!(entry.is_file(), "no cache entry for {source:?}");
    entry
}

/// Prepares `dir`, then places the cached JavaScript of `ts` next to it as `<stem>.mjs`
/// (so `import.meta.url` is where the loader would make it) and returns that path.
fn place_next_to(t: &Transpiler, ts: &Path) -> PathBuf {
    let js = cached(t, ts);
    let mjs = ts.with_extension("mjs");
    std::fs::copy(js, &mjs).unwrap();
    mjs
}

const KITCHEN_SINK: &str = r#"import type { Options } from './types.ts';
import { type Settings } from './settings.ts';
import { type Mode, other } from './never-loaded.ts';
import { join } from 'node:path';
import * as os from 'node:os';
import fsDefault, { type Stats } from 'node:fs';
import util = require('node:util');
export type { Options };
export { type Settings };
export interface Shape { area(): number }
export type Pair<T> = [T, T];

enum Color { Red, Green, Blue }
enum Label { Yes = 'yes', No = 'no' }
const enum Flag { A = 1 << 0, B = 1 << 1, AB = A | B }
export enum Exported { One = 1, Two }
namespace Geometry {
  export const unit = 1;
  export function double(n: number): number { return n * 2 * unit; }
}
enum Merged { X = 10 }
namespace Merged { export const extra = 'merged'; }

abstract class Animal {
  declare readonly kind: string;
  protected abstract sound(): string;
  speak(this: Animal): string { return `${this.constructor.name} says ${this.sound()}`; }
}
class Dog extends Animal implements Shape {
  static count = 0;
  #secret = 'bone';
  private definite!: number;
  constructor(public readonly name: string, private age: number = 3, protected tag?: string) {
    super();
    Dog.count++;
  }
  protected override sound(): string { return 'woof'; }
  area(): number { return this.age * 2; }
  get secret(): string { return this.#secret; }
  static { Dog.count = 100; }
}

function pick(value: string): string;
function pick(value: number): number;
function pick(value: string | number): string | number { return value; }

function first<T extends { id: number }>(items: readonly T[]): T | undefined { return items[0]; }
const identity = <T,>(x: T): T => x;
const numberIdentity = identity<number>;
function isString(x: unknown): x is string { return typeof x === 'string'; }
function assertNumber(x: unknown): asserts x is number { if (typeof x !== 'number') throw new Error('nan'); }

const config = { retries: 3, name: 'tool' } satisfies Record<string, string | number>;
const maybe: { deep?: { value?: number } } | undefined = JSON.parse('{"deep":{}}');
const nonNull = (maybe as any)!.deep!;
const casted = <string>(<unknown>'angle');
let definitelyAssigned!: string;
definitelyAssigned = 'assigned';
declare const injected: number | undefined;
declare function ambient(): void;
declare global { interface Window { toolhost?: true } }
type Keys = keyof typeof config;
const key: Keys = 'retries';
const tuple: Pair<number> = [1, 2];
const total = tuple.reduce((a: number, b: number) => a + b, 0);
const optional = maybe?.deep?.value ?? 'fallback';
let assign: number | undefined;
assign ??= 7;

export async function execute(toolCallId: string, params: { n: number }): Promise<string> {
  await Promise.resolve();
  return `${toolCallId}:${params.n * 2}`;
}

const dog = new Dog('rex');
const lines: Array<[string, unknown]> = [
  ['enum', [Color.Red, Color[Color.Blue], Color.Green]],
  ['stringEnum', [Label.Yes, Label.No]],
  ['constEnum', [Flag.A, Flag.B, Flag.AB]],
  ['exportedEnum', Exported.Two],
  ['namespace', Geometry.double(21)],
  ['merged', [Merged.X, Merged.extra]],
  ['paramProps', [dog.name, dog.area(), Object.keys(dog).sort()]],
  ['abstract', dog.speak()],
  ['private', dog.secret],
  ['static', Dog.count],
  ['overload', [pick('a'), pick(2)]],
  ['generic', [first([{ id: 5 }])?.id, numberIdentity(9)]],
  ['guards', [isString('s'), isString(1)]],
  ['satisfies', config.retries],
  ['nonNull', JSON.stringify(nonNull)],
  ['cast', casted],
  ['definite', definitelyAssigned],
  ['declare', typeof injected],
  ['keyof', key],
  ['tuple', total],
  ['optional', optional],
  ['logical', assign],
  ['importEquals', util.format('%s-%d', 'x', 1)],
  ['imports', [join('a', 'b'), typeof os.platform, typeof fsDefault.readFileSync]],
  ['execute', await execute('call', { n: 21 })],
];
assertNumber(total);
for (const [name, value] of lines) console.log(`${name}=${JSON.stringify(value)}`);
"#;

const KITCHEN_SINK_EXPECTED: &str = r#"enum=[0,"Blue",1]
stringEnum=["yes","no"]
constEnum=[1,2,3]
exportedEnum=2
namespace=42
merged=[10,"merged"]
paramProps=["rex",6,["age","definite","name","tag"]]
abstract="Dog says woof"
private="bone"
static=101
overload=["a",2]
generic=[5,9]
guards=[true,false]
satisfies=3
nonNull="{}"
cast="angle"
definite="assigned"
declare="undefined"
keyof="retries"
tuple=3
optional="fallback"
logical=7
importEquals="x-1"
imports=["a/b","function","function"]
execute="call:42"
"#;

#[test]
fn every_typescript_construct_runs_on_node() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("tool");
    let entry = tool.join("index.ts");
    write(&entry, KITCHEN_SINK);
    let t = Transpiler::new(tmp.path().join("cache")).unwrap();
    assert_eq!(t.prepare_folder(&tool).unwrap(), 1);

    let js = std::fs::read_to_string(cached(&t, &entry)).unwrap();
    for helper in ["@oxc-project/runtime", "@babel/runtime", "babelHelpers"] {
        assert!(!js.contains(helper), "output uses a helper: {js}");
    }
    assert!(!js.contains("never-loaded"), "type-only import kept: {js}");
    assert!(!js.contains("./types.ts"), "type-only import kept: {js}");

    // Run the cached file itself (its imports are all node: built-ins).
    let out = node(&[&cached(&t, &entry)]);
    assert_eq!(out, KITCHEN_SINK_EXPECTED);
}

#[test]
fn mts_cts_and_hashbang_files_run_as_es_modules() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("tool");
    write(
        &tool.join("a.mts"),
        "const n: number = 1;\nexport const a = n;\nconsole.log('mts', a);\n",
    );
    write(
        &tool.join("b.cts"),
        "const path = require('node:path') as typeof import('node:path');\nconsole.log('cts', path.basename(__filename));\n",
    );
    write(
        &tool.join("c.ts"),
        "#!/usr/bin/env node\nconsole.log('hashbang', typeof __dirname);\n",
    );
    let t = Transpiler::new(tmp.path().join("cache")).unwrap();
    assert_eq!(t.prepare_folder(&tool).unwrap(), 3);
    assert_eq!(node(&[&place_next_to(&t, &tool.join("a.mts"))]), "mts 1\n");
    assert_eq!(
        node(&[&place_next_to(&t, &tool.join("b.cts"))]),
        "cts b.mjs\n"
    );
    assert_eq!(
        node(&[&place_next_to(&t, &tool.join("c.ts"))]),
        "hashbang string\n"
    );
}

#[test]
fn commonjs_globals_come_from_import_meta_url() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("tool");
    write(
        &tool.join("index.ts"),
        "const path: typeof import('node:path') = require('node:path');\n\
         console.log(__dirname);\n\
         console.log(__filename);\n\
         console.log(path.basename(__dirname));\n\
         console.log(typeof require.resolve);\n",
    );
    write(
        &tool.join("seed.ts"),
        "import { dirname } from 'node:path';\n\
         import { fileURLToPath } from 'node:url';\n\
         const TOOL_DIR = typeof __dirname !== 'undefined' ? __dirname : dirname(fileURLToPath(import.meta.url));\n\
         console.log(TOOL_DIR);\n",
    );
    write(
        &tool.join("only_dirname.ts"),
        "export const here: string = __dirname;\nconsole.log(here);\n",
    );
    let t = Transpiler::new(tmp.path().join("cache")).unwrap();
    assert_eq!(t.prepare_folder(&tool).unwrap(), 3);

    let dir = tool.canonicalize().unwrap();
    let index = place_next_to(&t, &tool.join("index.ts"));
    let expected = format!(
        "{}\n{}\ntool\nfunction\n",
        dir.display(),
        dir.join("index.mjs").display()
    );
    assert_eq!(node(&[&index]), expected);

    let seed = place_next_to(&t, &tool.join("seed.ts"));
    assert_eq!(node(&[&seed]), format!("{}\n", dir.display()));

    let only = place_next_to(&t, &tool.join("only_dirname.ts"));
    let js = std::fs::read_to_string(&only).unwrap();
    assert!(!js.contains("const __filename"), "{js}");
    assert!(!js.contains("createRequire"), "{js}");
    assert_eq!(node(&[&only]), format!("{}\n", dir.display()));
}

#[test]
fn modules_without_commonjs_globals_get_no_preamble() {
    let tmp_cache = tempfile::tempdir().unwrap();
    let t = Transpiler::new(tmp_cache.path().join("c")).unwrap();
    let js = t
        .transpile(Path::new("x.ts"), "export const x: number = 1;\n")
        .unwrap();
    assert!(!js.contains("__toolhost_"), "{js}");
    assert!(js.starts_with("export const x = 1;\n"), "{js}");
}

#[test]
fn local_bindings_of_commonjs_names_are_not_redeclared() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("tool");
    write(
        &tool.join("own_require.ts"),
        "import { createRequire } from 'node:module';\n\
         const require = createRequire(import.meta.url);\n\
         const __dirname = 'mine';\n\
         console.log(require('node:path').sep, __dirname, typeof __filename);\n",
    );
    write(
        &tool.join("function_require.ts"),
        "function require(name: string): string { return `own:${name}`; }\n\
         var __filename = 'file';\n\
         console.log(require('x'), __filename);\n",
    );
    write(
        &tool.join("shadowed.ts"),
        "function load(require: (id: string) => unknown): unknown { return require('node:os'); }\n\
         const os = load(require) as { platform(): string };\n\
         console.log(typeof os.platform());\n",
    );
    write(
        &tool.join("ambient.ts"),
        "declare const __dirname: string;\n\
         declare function require(id: string): any;\n\
         console.log(typeof __dirname, typeof require('node:path').join);\n",
    );
    let t = Transpiler::new(tmp.path().join("cache")).unwrap();
    assert_eq!(t.prepare_folder(&tool).unwrap(), 4);

    let own = place_next_to(&t, &tool.join("own_require.ts"));
    let js = std::fs::read_to_string(&own).unwrap();
    assert!(!js.contains("__toolhost_createRequire"), "{js}");
    assert!(!js.contains("__toolhost_dirname"), "{js}");
    assert!(js.contains("__toolhost_fileURLToPath"), "{js}");
    assert_eq!(node(&[&own]), "/ mine string\n");

    let func = place_next_to(&t, &tool.join("function_require.ts"));
    let js = std::fs::read_to_string(&func).unwrap();
    assert!(!js.contains("__toolhost_"), "{js}");
    assert_eq!(node(&[&func]), "own:x file\n");

    let shadowed = place_next_to(&t, &tool.join("shadowed.ts"));
    assert_eq!(node(&[&shadowed]), "string\n");

    let ambient = place_next_to(&t, &tool.join("ambient.ts"));
    assert_eq!(node(&[&ambient]), "string function\n");
}

#[test]
fn source_maps_point_at_typescript_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("tool");
    // Types before the throw shift the JavaScript lines; the preamble adds one more.
    let source = "interface A {\n  a: number;\n}\ntype B = A;\n\nconst dir: string = __dirname;\nfunction boom(b?: B): never {\n  throw new Error('boom ' + dir.length);\n}\nboom();\n";
    write(&tool.join("with_preamble.ts"), source);
    write(
        &tool.join("without_preamble.ts"),
        &source.replace("__dirname", "'x'"),
    );
    let t = Transpiler::new(tmp.path().join("cache")).unwrap();
    assert_eq!(t.prepare_folder(&tool).unwrap(), 2);
    for name in ["with_preamble", "without_preamble"] {
        let mjs = place_next_to(&t, &tool.join(format!("{name}.ts")));
        let stderr = node_failing(&mjs);
        assert!(
            stderr.contains(&format!("{name}.ts:8:")),
            "stack of {name} does not point at the TypeScript line 8:\n{stderr}"
        );
    }
}

#[test]
fn cache_entries_are_sha256_named_and_reused() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("tool");
    write(
        &tool.join("index.ts"),
        "import { helper } from './lib/helper.ts';\nconsole.log(helper());\n",
    );
    write(
        &tool.join("lib/helper.ts"),
        "export const helper = (): number => 1;\n",
    );
    write(
        &tool.join("lib/other.mts"),
        "export const other: string = 'o';\n",
    );
    write(&tool.join("types.d.ts"), "declare const x: number;\n");
    write(
        &tool.join("node_modules/dep/index.ts"),
        "export const dep: number = 1;\n",
    );
    write(
        &tool.join(".hidden/secret.ts"),
        "export const s: number = 1;\n",
    );
    write(&tool.join("plain.js"), "export const js = 1;\n");
    write(&tool.join("README.md"), "# tool\n");
    let cache = tmp.path().join("cache");
    let t = Transpiler::new(&cache).unwrap();
    assert_eq!(t.cache_dir(), cache);

    assert_eq!(t.prepare_folder(&tool).unwrap(), 4);
    let mut names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = ["index.ts", "lib/helper.ts", "lib/other.mts", "plain.js"]
        .iter()
        .map(|f| format!("{}.js", sha256(&std::fs::read(tool.join(f)).unwrap())))
        .collect();
    expected.sort();
    assert_eq!(
        names, expected,
        "one entry per TypeScript and module JavaScript file, no temp files left"
    );

    // Everything cached: nothing transpiled, nothing rewritten.
    let helper_entry = cached(&t, &tool.join("lib/helper.ts"));
    let before = std::fs::metadata(&helper_entry)
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(t.prepare_folder(&tool).unwrap(), 0);

    // One edit: only that file is transpiled again; the old entry stays (content-addressed).
    write(&tool.join("index.ts"), "console.log('edited');\n");
    assert_eq!(t.prepare_folder(&tool).unwrap(), 1);
    assert_eq!(t.prepare_folder(&tool).unwrap(), 0);
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 5);
    let after = std::fs::metadata(&helper_entry)
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);

    // A second folder with identical content shares the entries.
    let copy = tmp.path().join("copy");
    write(
        &copy.join("lib/helper.ts"),
        "export const helper = (): number => 1;\n",
    );
    assert_eq!(t.prepare_folder(&copy).unwrap(), 0);

    // The cached JavaScript equals what `transpile` returns.
    let source = std::fs::read_to_string(tool.join("lib/helper.ts")).unwrap();
    let direct = t.transpile(&tool.join("lib/helper.ts"), &source).unwrap();
    assert_eq!(std::fs::read_to_string(helper_entry).unwrap(), direct);
}

#[test]
fn the_transpiler_creates_its_cache_dir_and_reports_missing_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("a/b/cache");
    let t = Transpiler::new(&cache).unwrap();
    assert!(cache.is_dir());
    let missing = tmp.path().join("no-such-tool");
    let err = t.prepare_folder(&missing).unwrap_err();
    assert!(matches!(err, TranspileError::Io { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with(&missing.display().to_string()),
        "{err}"
    );
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let tmp_cache = tempfile::tempdir().unwrap();
    let t = Transpiler::new(tmp_cache.path().join("c")).unwrap();
    let path = Path::new("tools/x/index.ts");
    let source = "const a: number = 1;\nexport function execute() {\n  const b = a +* 2;\n}\n";
    let err = t.transpile(path, source).unwrap_err();
    match &err {
        TranspileError::Syntax {
            path: p,
            line,
            column,
            message,
        } => {
            assert_eq!(p, path);
            assert_eq!((*line, *column), (3, 16), "{err}");
            assert!(!message.is_empty());
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
    let shown = err.to_string();
    assert!(
        shown.starts_with("tools/x/index.ts:3:16: TypeScript syntax error: "),
        "{shown}"
    );
    assert!(!shown.contains('\n'), "{shown}");

    // Errors found by semantic analysis (not the parser) are syntax errors too. Like
    // `toolhost check`, the position is the redeclaration, not the valid first declaration.
    let err = t.transpile(path, "let a = 1;\n  let a = 2;\n").unwrap_err();
    assert!(
        err.to_string().starts_with(
            "tools/x/index.ts:2:7: TypeScript syntax error: Identifier `a` has already been declared"
        ),
        "{err}"
    );

    // Columns count characters, not bytes.
    let err = t.transpile(path, "const é = 'ü'; ?\n").unwrap_err();
    assert!(
        err.to_string().starts_with("tools/x/index.ts:1:16:"),
        "{err}"
    );

    // prepare_folder reports the real path.
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("index.ts"), "export const = 1;\n");
    let err = t.prepare_folder(tmp.path()).unwrap_err();
    let expected = format!("{}:1:", tmp.path().join("index.ts").display());
    assert!(err.to_string().starts_with(&expected), "{err}");
    assert!(
        t.cache_dir().read_dir().unwrap().next().is_none(),
        "nothing cached"
    );
}

#[test]
fn unsupported_and_non_typescript_inputs_are_errors() {
    let tmp_cache = tempfile::tempdir().unwrap();
    let t = Transpiler::new(tmp_cache.path().join("c")).unwrap();
    let err = t
        .transpile(
            Path::new("d.ts"),
            "function sealed(c: any) {}\n@sealed\nclass A {}\n",
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            TranspileError::Unsupported {
                line: 2,
                column: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("d.ts:2:1: unsupported TypeScript: decorators"),
        "{err}"
    );

    let err = t
        .transpile(Path::new("e.ts"), "const x = 1;\nexport = x;\n")
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("e.ts:2:1: unsupported TypeScript: `export =`"),
        "{err}"
    );

    let err = t
        .transpile(
            Path::new("f.ts"),
            "class C {\n  accessor x = 1;\n}\n{ using r = null; }\n",
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("f.ts:2:3: unsupported TypeScript: `accessor`"),
        "{err}"
    );
    let err = t
        .transpile(Path::new("g.ts"), "export {};\nawait using r = null;\n")
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("g.ts:2:1: unsupported TypeScript: `using`"),
        "{err}"
    );
    // An abstract accessor is a type only: fine.
    let js = t
        .transpile(
            Path::new("h.ts"),
            "abstract class C { abstract accessor x: number; }\n",
        )
        .unwrap();
    assert!(!js.contains("accessor"), "{js}");

    let err = t
        .transpile(Path::new("x.cjs"), "module.exports = {}")
        .unwrap_err();
    assert!(
        matches!(err, TranspileError::NotTypeScript { .. }),
        "{err:?}"
    );

    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bad.ts"), b"const x = '\xff';\n").unwrap();
    let err = t.prepare_folder(tmp.path()).unwrap_err();
    assert!(matches!(err, TranspileError::Encoding { .. }), "{err:?}");
}

#[test]
fn a_large_generated_file_transpiles() {
    let mut source = String::from("export const values: number[] = [];\n");
    let mut n = 0;
    while source.len() < 200 * 1024 {
        source.push_str(&format!(
            "enum E{n} {{ A = {n}, B }}\n\
             export function f{n}<T extends number>(x: T, y?: string): number {{ \
             return (x as number) + E{n}.B + (y?.length ?? 0); }}\n\
             values.push(f{n}({n}));\n"
        ));
        n += 1;
    }
    source.push_str("console.log(values.length, values[values.length - 1]);\n");
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("big.ts"), &source);
    let t = Transpiler::new(tmp.path().join("cache")).unwrap();
    assert_eq!(t.prepare_folder(tmp.path()).unwrap(), 1);
    let out = node(&[&cached(&t, &tmp.path().join("big.ts"))]);
    assert_eq!(out, format!("{n} {}\n", 2 * (n - 1) + 1));
}

/// Nesting deeper than the caller's stack could take must still transpile: the transpiler
/// gives oxc a stack sized for the source. A panic inside oxc comes back as
/// `TranspileError::Internal`, so the result itself is checked, not only that the process
/// survived.
#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let tmp = tempfile::tempdir().unwrap();
    let t = Transpiler::new(tmp.path().join("c")).unwrap();
    for depth in [1_000, 20_000] {
        let arrays = format!(
            "export const x = {}1{};\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let parens = format!(
            "export const y = {}1{};\n",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let transpile = |source: &str| match t.transpile(Path::new("deep.ts"), source) {
            Ok(js) => js,
            Err(e) => panic!("nesting depth {depth} did not transpile: {e:?}"),
        };
        let arrays = transpile(&arrays);
        let parens = transpile(&parens);
        let code = |js: &str| -> String {
            let end = js.find("//# sourceMappingURL=").unwrap_or(js.len());
            js[..end].chars().filter(|c| !c.is_whitespace()).collect()
        };
        assert!(
            code(&arrays).contains(&format!("{}1{}", "[".repeat(depth), "]".repeat(depth))),
            "depth {depth}: the array literal lost its nesting"
        );
        assert!(code(&parens).contains("y="), "depth {depth}: {parens:.200}");
        // Node's own parser overflows its stack beyond a few thousand levels, so only the
        // shallower output is run.
        if depth <= 1_000 {
            let dir = tmp.path().join(format!("run{depth}"));
            write(&dir.join("arrays.mjs"), &arrays);
            write(&dir.join("parens.mjs"), &parens);
            write(
                &dir.join("main.mjs"),
                "import { x } from './arrays.mjs';\n\
                 import { y } from './parens.mjs';\n\
                 let n = 0, v = x;\n\
                 while (Array.isArray(v)) { v = v[0]; n++; }\n\
                 console.log(n, v, y);\n",
            );
            assert_eq!(node(&[&dir.join("main.mjs")]), format!("{depth} 1 1\n"));
        }
    }
}

#[test]
fn truncated_sources_never_panic() {
    let tmp_cache = tempfile::tempdir().unwrap();
    let t = Transpiler::new(tmp_cache.path().join("c")).unwrap();
    let source = &KITCHEN_SINK[..KITCHEN_SINK.len().min(2500)];
    let mut errors = 0;
    for (end, _) in source.char_indices() {
        match t.transpile(Path::new("index.ts"), &source[..end]) {
            Ok(_) => {}
            Err(e) => {
                errors += 1;
                let shown = e.to_string();
                assert!(shown.starts_with("index.ts:"), "{shown}");
                assert!(!shown.contains('\n'), "{shown}");
                assert!(!matches!(e, TranspileError::Internal { .. }), "{shown}");
            }
        }
    }
    assert!(errors > 0);
}

/// Imports `entry` through Toolhost's own module hooks (the runtime's
/// `src/node/hooks.mjs`, which find the transpiler's cache entries by their sha256 name),
/// as the worker does, and prints what its `execute()` returns.
fn node_through_hooks(cache: &Path, entry: &Path) -> std::process::Output {
    let hooks = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src/node/hooks.mjs");
    let runner = cache.parent().unwrap().join("run.mjs");
    write(
        &runner,
        "import { register } from 'node:module';\n\
         import { pathToFileURL } from 'node:url';\n\
         const [hooks, cacheDir, entry] = process.argv.slice(2);\n\
         register(pathToFileURL(hooks), { data: { cacheDir } });\n\
         const mod = await import(`${pathToFileURL(entry).href}?v=1`);\n\
         console.log(await mod.execute());\n",
    );
    Command::new("node")
        .arg("--enable-source-maps")
        .arg(&runner)
        .arg(&hooks)
        .arg(cache)
        .arg(entry)
        .output()
        .unwrap()
}

#[test]
fn tools_run_through_the_node_loader_hooks() {
    let tmp = tempfile::tempdir().unwrap();
    let tool = tmp.path().join("tool");
    write(
        &tool.join("index.ts"),
        "import { helper, type Helper } from './lib/helper.ts';\n\
         import { twice } from './lib/util.js';\n\
         import { basename } from 'node:path';\n\
         export async function execute(): Promise<string> {\n\
           const h: Helper = helper;\n\
           return [h(), twice(2), basename(__dirname), basename(__filename)].join(' ');\n\
         }\n",
    );
    write(
        &tool.join("lib/helper.ts"),
        "export type Helper = () => string;\n\
         export const helper: Helper = () => require('node:path').basename(__dirname);\n",
    );
    write(
        &tool.join("lib/util.ts"),
        "export const twice = (n: number): number => n * 2;\n",
    );
    let cache = tmp.path().join("cache");
    let t = Transpiler::new(&cache).unwrap();
    assert_eq!(t.prepare_folder(&tool).unwrap(), 3);
    let out = node_through_hooks(&cache, &tool.join("index.ts"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "lib 4 tool index.ts\n"
    );

    // A stack trace through the hooks points at the TypeScript file and line.
    write(
        &tool.join("index.ts"),
        "type T = string;\n\n\
         export async function execute(): Promise<T> {\n\
           const dir: T = __dirname;\n\
           throw new Error(`failed in ${dir.length > 0}`);\n\
         }\n",
    );
    assert_eq!(t.prepare_folder(&tool).unwrap(), 1);
    let out = node_through_hooks(&cache, &tool.join("index.ts"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(stderr.contains("failed in true"), "{stderr}");
    let at = format!("{}:5:", tool.join("index.ts").display());
    assert!(stderr.contains(&at), "no {at} in:\n{stderr}");
}
