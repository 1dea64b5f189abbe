// Which ffmpeg binary to run: an explicit path, FFMPEG_PATH, ffmpeg-static, @ffmpeg-installer,
// then PATH. Each candidate must exist, be executable and answer `-version`; results are cached.
import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { AudioSourceError } from '../errors.js';

export interface ResolveFfmpegOptions {
  /** An explicit binary, tried first. */
  readonly ffmpegPath?: string | undefined;
  /** Where `FFMPEG_PATH` and `PATH` are read from. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /**
   * npm packages that ship a binary, tried in order after `FFMPEG_PATH`. Each is loaded only if
   * installed; its export is the path (`ffmpeg-static`) or has a `path` (`@ffmpeg-installer/ffmpeg`).
   * Default `['ffmpeg-static', '@ffmpeg-installer/ffmpeg']`.
   */
  readonly packages?: readonly string[] | undefined;
}

/** The binary that will be run, and where it was found. */
export interface ResolvedFfmpeg {
  readonly path: string;
  /** `option`, `env FFMPEG_PATH`, `package <name>` or `PATH`. */
  readonly source: string;
  /** The first line of `ffmpeg -version`. */
  readonly version: string;
}

export const DEFAULT_FFMPEG_PACKAGES: readonly string[] = ['ffmpeg-static', '@ffmpeg-installer/ffmpeg'];

const VERSION_TIMEOUT_MS = 10_000;
const verified = new Map<string, Promise<string>>();
const requireHere = createRequire(import.meta.url);

/**
 * Find a working ffmpeg, in this order: `options.ffmpegPath`, env `FFMPEG_PATH`, the
 * `ffmpeg-static` package, the `@ffmpeg-installer/ffmpeg` package, `ffmpeg` on `PATH`.
 *
 * - A candidate is accepted when the file exists, is executable and `<path> -version` exits 0
 *   printing `ffmpeg version`; that check runs once per path per process (cached).
 * - Packages are optional: a package that is not installed is skipped (and listed as tried).
 * - Rejects with `AudioSourceError('ffmpeg_not_found')` whose message lists every place tried
 *   and why each was refused.
 *
 * ## Example
 * ```ts
 * import { resolveFfmpeg } from 'svc-stream';
 *
 * const ffmpeg = await resolveFfmpeg();
 * console.log(`${ffmpeg.path} (from ${ffmpeg.source}): ${ffmpeg.version}`);
 * ```
 */
export async function resolveFfmpeg(options: ResolveFfmpegOptions = {}): Promise<ResolvedFfmpeg> {
  const env = options.env ?? process.env;
  const tried: string[] = [];
  const attempt = async (path: string, source: string): Promise<ResolvedFfmpeg | undefined> => {
    try {
      const version = await verifyFfmpeg(path);
      return { path, source, version };
    } catch (err) {
      tried.push(`${source}: ${path} (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  };

  if (options.ffmpegPath !== undefined) {
    const found = await attempt(options.ffmpegPath, 'option');
    if (found) return found;
  } else {
    tried.push('option: not given');
  }

  const fromEnv = env['FFMPEG_PATH'];
  if (fromEnv) {
    const found = await attempt(fromEnv, 'env FFMPEG_PATH');
    if (found) return found;
  } else {
    tried.push('env FFMPEG_PATH: not set');
  }

  for (const pkg of options.packages ?? DEFAULT_FFMPEG_PACKAGES) {
    const path = packageBinary(pkg);
    if (typeof path !== 'string') {
      tried.push(`package ${pkg}: ${path.reason}`);
      continue;
    }
    const found = await attempt(path, `package ${pkg}`);
    if (found) return found;
  }

  const dirs = (env['PATH'] ?? '').split(delimiter).filter((d) => d.length > 0);
  const names = process.platform === 'win32' ? ['ffmpeg.exe'] : ['ffmpeg'];
  let onPath = false;
  for (const dir of dirs) {
    for (const name of names) {
      const path = join(dir, name);
      if (!(await isFile(path))) continue;
      onPath = true;
      const found = await attempt(path, 'PATH');
      if (found) return found;
    }
  }
  if (!onPath) tried.push(`PATH: no ffmpeg in ${dirs.length > 0 ? dirs.join(delimiter) : '(empty PATH)'}`);

  throw new AudioSourceError(
    'ffmpeg_not_found',
    `no working ffmpeg found. Tried, in order:\n  - ${tried.join('\n  - ')}\nInstall ffmpeg, set FFMPEG_PATH, or pass ffmpegPath.`,
    { detail: tried },
  );
}

/** Forget which binaries were verified (for tests, or after replacing a binary). */
export function clearFfmpegCache(): void {
  verified.clear();
}

/**
 * Check one binary: exists, executable, and `-version` says ffmpeg. Resolves with the first
 * line of the version output; rejects with the reason. Cached per path.
 */
export function verifyFfmpeg(path: string): Promise<string> {
  let check = verified.get(path);
  if (!check) {
    check = runVersion(path);
    verified.set(path, check);
    // A failure is not cached: the binary may be installed or fixed later.
    check.catch(() => verified.delete(path));
  }
  return check;
}

async function runVersion(path: string): Promise<string> {
  try {
    await access(path, fsConstants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'not executable' : `not accessible: ${code ?? String(err)}`);
  }
  if (!(await isFile(path))) throw new Error('not a file');
  const output = await new Promise<string>((resolve, reject) => {
    execFile(path, ['-version'], { timeout: VERSION_TIMEOUT_MS, windowsHide: true }, (err, stdout) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException & { code?: unknown }).code;
        reject(new Error(typeof code === 'number' ? `-version exited with ${code}` : `-version failed: ${err.message}`));
      } else resolve(stdout);
    });
  });
  const first = output.split('\n', 1)[0]?.trim() ?? '';
  if (!/^ffmpeg version/i.test(first)) throw new Error(`-version did not print "ffmpeg version" (got ${JSON.stringify(first.slice(0, 80))})`);
  return first;
}

function packageBinary(pkg: string): string | { reason: string } {
  let mod: unknown;
  try {
    mod = requireHere(pkg);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { reason: code === 'MODULE_NOT_FOUND' ? 'not installed' : `failed to load: ${err instanceof Error ? err.message : String(err)}` };
  }
  const path = typeof mod === 'string' ? mod : (mod as { path?: unknown } | null)?.path ?? (mod as { default?: unknown } | null)?.default;
  return typeof path === 'string' ? path : { reason: 'does not export a binary path for this platform' };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
