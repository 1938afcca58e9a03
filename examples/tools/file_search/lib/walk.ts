import { opendir, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';

/** One regular file found by {@link walk}. */
export type WalkEntry = {
  /** Absolute path. */
  path: string;
  /** Path relative to the walk root, always with `/` separators. */
  rel: string;
};

export type WalkOptions = {
  /** Directory names never entered (matched against the name, at any depth). */
  skipDirs?: ReadonlySet<string>;
  /** Called for each directory or file that cannot be read; the walk goes on. */
  onError?: (path: string, error: unknown) => void;
  /** Stops the walk early when aborted. */
  signal?: AbortSignal;
};

export const DEFAULT_SKIP_DIRS: ReadonlySet<string> = new Set(['node_modules', '.git']);

function toRel(root: string, path: string): string {
  const rel = relative(root, path);
  return sep === '/' ? rel : rel.split(sep).join('/');
}

/**
 * Yields every regular file under `root`, depth first, in name order, so results are stable
 * from run to run. Symbolic links to files are followed; symbolic links to directories are
 * not (that avoids cycles). If `root` is itself a file, it is the only entry.
 */
export async function* walk(root: string, options: WalkOptions = {}): AsyncGenerator<WalkEntry> {
  const skipDirs = options.skipDirs ?? DEFAULT_SKIP_DIRS;
  const rootStat = await stat(root);
  if (rootStat.isFile()) {
    yield { path: root, rel: basename(root) };
    return;
  }

  const stack: string[] = [root];
  while (stack.length > 0) {
    if (options.signal?.aborted) return;
    const dir = stack.pop() as string;

    let names: Array<{ name: string; kind: 'file' | 'dir' | 'link' | 'other' }>;
    try {
      names = [];
      const handle = await opendir(dir);
      for await (const d of handle) {
        const kind = d.isFile() ? 'file' : d.isDirectory() ? 'dir' : d.isSymbolicLink() ? 'link' : 'other';
        names.push({ name: d.name, kind });
      }
    } catch (e) {
      options.onError?.(dir, e);
      continue;
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

    const subdirs: string[] = [];
    for (const { name, kind } of names) {
      const full = join(dir, name);
      if (kind === 'dir') {
        if (!skipDirs.has(name)) subdirs.push(full);
      } else if (kind === 'file') {
        yield { path: full, rel: toRel(root, full) };
      } else if (kind === 'link') {
        try {
          if ((await stat(full)).isFile()) yield { path: full, rel: toRel(root, full) };
        } catch (e) {
          options.onError?.(full, e); // dangling link
        }
      }
      if (options.signal?.aborted) return;
    }
    // Push in reverse so the alphabetically first subdirectory is walked next.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]);
  }
}
