import { spawn } from 'node:child_process';
import { accessSync, constants, type Dirent, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  program?: string;
  args: string;
  cwd?: string;
  timeout_ms?: number;
  output_path?: string;
};

const HOME = process.env.HOME || process.env.OFFICER_USER_ROOT || '/officer/user';
const DEFAULT_TIMEOUT_MS = 600_000;
const MAX_TIMEOUT_MS = 3_500_000;
const STDERR_TAIL = 4096;
const MAX_STDOUT_INLINE = 100_000;
const MAX_STDOUT_KEPT = 64 * 1024 * 1024;
const SCAN_DEPTH = 2;
const SCAN_ENTRIES = 20_000;
const PROGRESS_EVERY_MS = 1000;
const SHELL_OPERATORS = ['|', '||', '&&', ';', '>', '>>', '<', '2>', '2>&1', '&', '$(', '`'];

class ToolError extends Error {}

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function findProgram(name: string): string | undefined {
  for (const dir of (process.env.PATH || '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A command line split as a POSIX shell splits words: quotes and backslashes, nothing else. */
function splitArgs(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new ToolError('args: a single quote is not closed.');
      cur += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      inWord = true;
      for (;;) {
        if (i >= line.length) throw new ToolError('args: a double quote is not closed.');
        const d = line[i];
        if (d === '"') break;
        if (d === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1])) {
          cur += line[i + 1];
          i += 2;
          continue;
        }
        cur += d;
        i++;
      }
      i++;
    } else if (c === '\\') {
      if (i + 1 < line.length && line[i + 1] !== '\n') cur += line[i + 1];
      inWord = true;
      i += 2;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
      i++;
    } else {
      cur += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

function parseArgs(raw: string, program: string): string[] {
  const text = raw.trim();
  let args: string[];
  if (text.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new ToolError(`args looks like a JSON array but does not parse (${e instanceof Error ? e.message : e}).`);
    }
    if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string' || typeof a === 'number')) {
      throw new ToolError('args as JSON must be an array of strings, like ["-i", "in.wav", "out.mp3"].');
    }
    args = parsed.map(String);
  } else {
    args = splitArgs(text);
    const op = args.find((a) => SHELL_OPERATORS.includes(a) || a.startsWith('$('));
    if (op) {
      throw new ToolError(
        `args holds "${op}", which only a shell understands, and there is no shell: run one ${program} per call ` +
          '(write intermediate files, then call again), or pass the arguments as a JSON array if it is meant literally.',
      );
    }
  }
  // A model often repeats the program's name.
  if (args.length && /^(\/usr\/bin\/)?(ffmpeg|ffprobe)$/.test(args[0])) args = args.slice(1);
  if (args.length === 0) throw new ToolError(`args is empty: give ${program}'s arguments, e.g. ["-i", "in.wav", "out.mp3"].`);
  return args;
}

type Seen = Map<string, { size: number; mtime: number }>;

/** Files under `dir` (`depth` levels), bounded. */
function scan(dir: string, depth: number, seen: Seen = new Map()): Seen {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return seen;
  }
  for (const e of entries) {
    if (seen.size >= SCAN_ENTRIES) return seen;
    const p = join(dir, e.name);
    if (e.isFile()) {
      try {
        const st = statSync(p);
        seen.set(p, { size: st.size, mtime: st.mtimeMs });
      } catch {
        // gone
      }
    } else if (e.isDirectory() && depth > 1 && e.name !== 'tools' && !e.name.startsWith('.')) {
      scan(p, depth - 1, seen);
    }
  }
  return seen;
}

function bytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${n} bytes`;
}

function quote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

function clock(seconds: number): string {
  const m = Math.floor(seconds / 60);
  return `${m}:${(seconds % 60).toFixed(1).padStart(4, '0')}`;
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    const program = params.program || 'ffmpeg';
    if (program !== 'ffmpeg' && program !== 'ffprobe') return err(`program must be ffmpeg or ffprobe, not "${program}".`);
    if (typeof params.args !== 'string' || !params.args.trim()) {
      return err(`args is required: ${program}'s arguments as a JSON array or a command line.`);
    }
    const userArgs = parseArgs(params.args, program);
    const bin = findProgram(program);
    if (!bin) {
      return err(
        `${program} is not installed on this machine: the operator must install the Debian package \`ffmpeg\` (apt-get install ffmpeg).`,
      );
    }
    const cwd = params.cwd && params.cwd.trim() ? (isAbsolute(params.cwd) ? params.cwd : resolve(HOME, params.cwd)) : HOME;
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
      return err(`cwd ${cwd} is not a folder. Paths are relative to the user's home (${HOME}).`);
    }
    const timeoutMs = Math.min(Math.max(Number(params.timeout_ms) || DEFAULT_TIMEOUT_MS, 1000), MAX_TIMEOUT_MS);

    const args = ['-hide_banner'];
    // ffmpeg's own output on stdout (pipe:1 or -) must not be mixed with progress lines.
    const stdoutIsOutput = userArgs.some((a) => a === '-' || a === 'pipe:1' || a === 'pipe:');
    const progress = program === 'ffmpeg' && !stdoutIsOutput && !userArgs.includes('-progress');
    if (program === 'ffmpeg') {
      if (!userArgs.includes('-nostdin')) args.push('-nostdin');
      if (progress) args.push('-progress', 'pipe:1', '-nostats');
    }
    args.push(...userArgs);

    // Files before, to list what the run made.
    const before = scan(cwd, SCAN_DEPTH);
    const named = userArgs.filter((a) => !a.startsWith('-') && /[./]/.test(a) && !/^[a-z]+:/i.test(a)).map((a) => resolve(cwd, a));
    const namedBefore = new Map(named.filter((p) => existsSync(p)).map((p) => [p, statSync(p).mtimeMs]));
    const started = Date.now();

    // Duration of the input (from ffmpeg's own log) for percentages.
    let total = 0;
    let lastUpdate = 0;
    let progressBlock: Record<string, string> = {};
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stdoutCut = false;
    let stderr = '';
    let pending = '';
    let timedOut = false;

    const code: number = await new Promise((resolvePromise, reject) => {
      if (signal?.aborted) return reject(new ToolError('Cancelled before it started.'));
      const child = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (d: Buffer) => {
        if (!progress) {
          if (stdoutBytes + d.length > MAX_STDOUT_KEPT) stdoutCut = true;
          else stdout.push(d);
          stdoutBytes += d.length;
          return;
        }
        pending += d.toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          const eq = line.indexOf('=');
          if (eq < 0) continue;
          const key = line.slice(0, eq).trim();
          progressBlock[key] = line.slice(eq + 1).trim();
          if (key !== 'progress') continue;
          const now = Date.now();
          if (now - lastUpdate >= PROGRESS_EVERY_MS || progressBlock.progress === 'end') {
            lastUpdate = now;
            const done = Number(progressBlock.out_time_us ?? progressBlock.out_time_ms ?? 0) / 1e6;
            const pct = total > 0 ? ` ${Math.min(100, Math.round((done / total) * 100))}%,` : '';
            const speed = progressBlock.speed && progressBlock.speed !== 'N/A' ? `, speed ${progressBlock.speed}` : '';
            const frame = progressBlock.frame ? `, frame ${progressBlock.frame}` : '';
            onUpdate?.({ content: [{ type: 'text', text: `ffmpeg:${pct} ${clock(Math.max(done, 0))} done${frame}${speed}` }] });
          }
          progressBlock = {};
        }
      });
      child.stderr.on('data', (d: Buffer) => {
        const s = d.toString('utf8');
        if (!total) {
          const m = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(stderr.slice(-200) + s);
          if (m) total = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
        }
        stderr = (stderr + s).slice(-64 * 1024);
      });
      const kill = () => child.kill('SIGKILL');
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, timeoutMs);
      signal?.addEventListener('abort', kill, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', kill);
      };
      child.on('error', (e) => {
        done();
        reject(e);
      });
      child.on('close', (c, sig) => {
        done();
        resolvePromise(c ?? (sig ? 128 : 1));
      });
    });

    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const command = [program, ...args].map(quote).join(' ');
    const lines = [`$ ${command}`, `(in ${cwd})`];

    // Files created or changed.
    const after = scan(cwd, SCAN_DEPTH);
    const changed: string[] = [];
    for (const [p, st] of after) {
      const old = before.get(p);
      if (!old || old.mtime !== st.mtime || old.size !== st.size) changed.push(p);
    }
    for (const p of named) {
      if (changed.includes(p) || !existsSync(p) || !statSync(p).isFile()) continue;
      const mt = statSync(p).mtimeMs;
      if (namedBefore.get(p) !== mt && mt >= started - 1000) changed.push(p);
    }
    const fileLines = changed.sort().map((p) => {
      const rel = relative(cwd, p);
      const shown = rel && !rel.startsWith('..') ? rel : p;
      return `  ${shown} (${bytes(statSync(p).size)})`;
    });

    let out = Buffer.concat(stdout).toString('utf8');
    let savedNote = '';
    if (params.output_path && params.output_path.trim()) {
      const target = isAbsolute(params.output_path) ? params.output_path : resolve(HOME, params.output_path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, Buffer.concat(stdout));
      savedNote = `standard output (${bytes(stdoutBytes)}) saved to ${target}`;
      out = '';
    } else if (out.length > MAX_STDOUT_INLINE) {
      savedNote = `standard output is ${bytes(stdoutBytes)}; the first ${MAX_STDOUT_INLINE} characters follow (pass output_path to keep it all)`;
      out = out.slice(0, MAX_STDOUT_INLINE);
    }
    if (stdoutCut) savedNote += ` (cut at ${bytes(MAX_STDOUT_KEPT)})`;

    const tail = stderr.length > STDERR_TAIL ? `…${stderr.slice(-STDERR_TAIL)}` : stderr;
    const cancelled = signal?.aborted;
    if (cancelled) lines.push(`Cancelled after ${seconds} s: ${program} was stopped.`);
    else if (timedOut) lines.push(`${program} took longer than ${timeoutMs / 1000} s (timeout_ms) and was stopped.`);
    else lines.push(`${program} exited with status ${code} after ${seconds} s.`);
    if (savedNote) lines.push(savedNote);
    if (out.trim()) lines.push('', 'Standard output:', out.trimEnd());
    if (fileLines.length) lines.push('', 'Files created or changed:', ...fileLines);
    else if (program === 'ffmpeg') lines.push('', 'No files were created or changed.');
    if (tail.trim()) lines.push('', 'Log (standard error, end):', tail.trimEnd());
    const text = lines.join('\n');
    return code === 0 && !timedOut && !cancelled ? ok(text) : err(text);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof ToolError ? message : `ffmpeg tool failed: ${message}`);
  }
}
