import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  input_path: string;
  output_path?: string;
  bitrate?: string;
  mono?: boolean;
  sample_rate?: number;
  overwrite?: boolean;
};

type Stream = { codec_type?: string; codec_name?: string; sample_rate?: string; channels?: number; bit_rate?: string };
type Probe = { streams?: Stream[]; format?: { duration?: string; size?: string; bit_rate?: string; format_name?: string } };

const HOME = process.env.HOME || process.env.OFFICER_USER_ROOT || '/officer/user';
const BITRATES = ['64k', '96k', '128k', '160k', '192k', '256k', '320k'];
const MP3_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000];
const PROBE_TIMEOUT_MS = 60_000;
const PROGRESS_EVERY_MS = 1000;

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

function need(program: string): string {
  const found = findProgram(program);
  if (!found) {
    throw new ToolError(
      `${program} is not installed on this machine: the operator must install the Debian package \`ffmpeg\` ` +
        '(apt-get install ffmpeg), which has both ffmpeg and ffprobe.',
    );
  }
  return found;
}

function inHome(path: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(HOME, path);
}

function under(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Runs `bin` (no shell); `onLine` sees stdout line by line. SIGKILL on abort or timeout. */
function run(
  bin: string,
  args: string[],
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
  onLine?: (line: string) => void,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    if (signal?.aborted) return reject(new ToolError('Cancelled.'));
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let errText = '';
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      if (!onLine) {
        out.push(d);
        return;
      }
      pending += d.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine(line.trim());
    });
    child.stderr.on('data', (d: Buffer) => {
      // Keep the tail: ffmpeg's error is at the end.
      errText = (errText + d.toString('utf8')).slice(-16_384);
    });
    let timedOut = false;
    const kill = () => child.kill('SIGKILL');
    const timer = timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          kill();
        }, timeoutMs)
      : undefined;
    signal?.addEventListener('abort', kill, { once: true });
    const done = () => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
    };
    child.on('error', (e) => {
      done();
      reject(e);
    });
    child.on('close', (code) => {
      done();
      if (signal?.aborted) return reject(new ToolError('Cancelled: ffmpeg was stopped and no MP3 was written.'));
      if (timedOut) return reject(new ToolError(`${basename(bin)} took longer than ${(timeoutMs ?? 0) / 1000} s and was stopped.`));
      resolvePromise({ code: code ?? 1, stdout: Buffer.concat(out).toString('utf8'), stderr: errText });
    });
  });
}

function tail(stderr: string, lines = 4): string {
  return stderr.trim().split('\n').slice(-lines).join('\n');
}

async function probe(ffprobe: string, file: string, signal: AbortSignal | undefined): Promise<Probe | undefined> {
  const r = await run(
    ffprobe,
    ['-v', 'error', '-hide_banner', '-print_format', 'json', '-show_format', '-show_streams', file],
    signal,
    PROBE_TIMEOUT_MS,
  );
  if (r.code !== 0) return undefined;
  try {
    return JSON.parse(r.stdout) as Probe;
  } catch {
    return undefined;
  }
}

function clock(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = (seconds % 60).toFixed(1).padStart(4, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

function bytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${n} bytes`;
}

function channels(n: number | undefined): string {
  if (n === 1) return 'mono';
  if (n === 2) return 'stereo';
  return `${n ?? '?'} channels`;
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    if (!params.input_path || !params.input_path.trim()) return err('input_path is required: the audio or video file to convert.');
    const input = inHome(params.input_path.trim());
    if (!existsSync(input)) return err(`No such file: ${input}. Paths are relative to the user's home (${HOME}).`);
    if (!statSync(input).isFile()) return err(`${input} is not a file.`);
    const bitrate = params.bitrate || '192k';
    if (!BITRATES.includes(bitrate)) return err(`bitrate "${bitrate}" is not one of ${BITRATES.join(', ')}.`);
    if (params.sample_rate !== undefined && !MP3_RATES.includes(params.sample_rate)) {
      return err(`sample_rate ${params.sample_rate} is not an MP3 rate: use one of ${MP3_RATES.join(', ')} (Hz), or leave it out.`);
    }

    const ffmpeg = need('ffmpeg');
    const ffprobe = need('ffprobe');

    // What the input holds: it must have an audio stream.
    const info = await probe(ffprobe, input, signal);
    if (!info) {
      return err(
        `${input} is not an audio or video file ffprobe can read (a text file, a document, or a damaged or incomplete file). ` +
          'Give a WAV, FLAC, OGG, M4A, MP3, video… file.',
      );
    }
    const streams = info.streams ?? [];
    // ffprobe "reads" any text as ANSI art (format tty) or subtitles: that is not audio.
    const textual = info.format?.format_name === 'tty' || (streams.length > 0 && streams.every((s) => s.codec_type === 'subtitle'));
    if (textual) {
      return err(
        `${input} is not an audio or video file ffprobe can read: it is text (ffprobe sees ${info.format?.format_name}). ` +
          'Give a WAV, FLAC, OGG, M4A, MP3, video… file.',
      );
    }
    const audio = streams.find((s) => s.codec_type === 'audio');
    if (!audio) {
      const has = streams.map((s) => `${s.codec_type} (${s.codec_name})`).join(', ') || 'no streams';
      return err(`${input} has no audio stream, so there is nothing to convert (it holds: ${has}).`);
    }
    const duration = Number(info.format?.duration) || 0;

    // Where the MP3 goes.
    let output: string;
    if (params.output_path && params.output_path.trim()) {
      output = inHome(params.output_path.trim());
      if (!/\.mp3$/i.test(output)) output += '.mp3';
    } else {
      const stem = basename(input, extname(input));
      output = join(under(input, HOME) ? dirname(input) : HOME, `${stem}.mp3`);
    }
    if (output === input) {
      return err(`The MP3 would replace its own input ${input}: pass another output_path.`);
    }
    if (existsSync(output) && !params.overwrite) {
      return err(`${output} already exists: pass overwrite: true to replace it, or another output_path.`);
    }
    if (existsSync(output) && !statSync(output).isFile()) return err(`${output} is a folder, not a file name.`);
    mkdirSync(dirname(output), { recursive: true });

    // ffmpeg writes a temporary file beside the output, renamed when complete.
    const part = join(dirname(output), `.${basename(output)}.${process.pid}.part`);
    const args = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1', '-y', '-i', input];
    args.push('-map', '0:a:0', '-vn', '-sn', '-dn', '-map_metadata', '0', '-codec:a', 'libmp3lame', '-b:a', bitrate);
    if (params.mono) args.push('-ac', '1');
    if (params.sample_rate) args.push('-ar', String(params.sample_rate));
    args.push('-id3v2_version', '3', '-f', 'mp3', part);

    onUpdate?.({ content: [{ type: 'text', text: `Converting ${basename(input)} (${clock(duration)}, ${audio.codec_name}) to MP3 at ${bitrate}…` }] });
    let last = 0;
    let result: { code: number; stderr: string };
    try {
      result = await run(ffmpeg, args, signal, undefined, (line) => {
        const m = /^out_time_(?:us|ms)=(\d+)/.exec(line);
        if (!m || !duration) return;
        const now = Date.now();
        if (now - last < PROGRESS_EVERY_MS) return;
        last = now;
        const done = Number(m[1]) / 1e6;
        const pct = Math.min(100, Math.round((done / duration) * 100));
        onUpdate?.({ content: [{ type: 'text', text: `Converting: ${pct}% (${clock(done)} of ${clock(duration)})` }] });
      });
    } catch (e) {
      rmSync(part, { force: true });
      throw e;
    }
    if (result.code !== 0) {
      rmSync(part, { force: true });
      return err(`ffmpeg failed (exit status ${result.code}): ${tail(result.stderr) || 'no message'}`);
    }
    if (existsSync(output) && !params.overwrite) {
      rmSync(part, { force: true });
      return err(`${output} appeared while converting: pass overwrite: true to replace it, or another output_path.`);
    }
    renameSync(part, output);

    const mp3 = await probe(ffprobe, output, signal);
    const a = mp3?.streams?.find((s) => s.codec_type === 'audio');
    const size = statSync(output).size;
    const secs = Number(mp3?.format?.duration) || duration;
    const kbps = Math.round(Number(a?.bit_rate || mp3?.format?.bit_rate || 0) / 1000);
    return ok(
      `Converted ${input} to ${output}: ${clock(secs)} (${secs.toFixed(2)} s), ${bytes(size)} (${size} bytes), ` +
        `${kbps} kb/s, ${a?.sample_rate ?? '?'} Hz, ${channels(a?.channels)}.`,
    );
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof ToolError ? message : `Conversion failed: ${message}`);
  }
}
