// Which ffmpeg binary to run: an explicit path, FFMPEG_PATH, ffmpeg-static, then the newer of
// the system ffmpeg and @ffmpeg-installer's. Each must answer `-version`; results are cached.
import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { AudioSourceError } from '../errors/index.js';

/** Options of {@link resolveFfmpeg}: an explicit binary, the environment to read, and the npm packages tried in order. */
export interface ResolveFfmpegOptions {
  /** An explicit binary, tried first. */
  readonly ffmpegPath?: string | undefined;
  /** Where `FFMPEG_PATH` and `PATH` are read from. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /**
   * npm packages that ship a binary, tried in order after `FFMPEG_PATH`. Each is loaded only if
   * installed; its export is the path (`ffmpeg-static`) or has a `path` (`@ffmpeg-installer/ffmpeg`).
   * Default `['ffmpeg-static']` (an optional extra: its install script downloads the binary).
   */
  readonly packages?: readonly string[] | undefined;
  /**
   * Bundled packages that are the fallback: one is used only when `ffmpeg` on `PATH` is not
   * newer (by the release year its `-version` prints) or does not work. Default
   * `['@ffmpeg-installer/ffmpeg']`, an optional dependency (installed by default, left out by
   * `npm install --omit=optional`) whose binary is a 2018 build.
   */
  readonly fallbackPackages?: readonly string[] | undefined;
}

/** The binary that will be run, and where it was found. */
export interface ResolvedFfmpeg {
  readonly path: string;
  /** `option`, `env FFMPEG_PATH`, `package <name>` or `PATH`. */
  readonly source: string;
  /** The first line of `ffmpeg -version`. */
  readonly version: string;
}

export const DEFAULT_FFMPEG_PACKAGES: readonly string[] = ['ffmpeg-static'];
export const DEFAULT_FFMPEG_FALLBACK_PACKAGES: readonly string[] = ['@ffmpeg-installer/ffmpeg'];

const VERSION_TIMEOUT_MS = 10_000;
/** The three ways to get an ffmpeg, as `ffmpeg_not_found` lists them. */
const FFMPEG_REMEDIES = [
  'Get ffmpeg one of three ways:',
  '  1. the bundled binary: npm install @ffmpeg-installer/ffmpeg (an optional dependency; npm install --omit=optional leaves it out)',
  '  2. a system ffmpeg on PATH (apt-get install ffmpeg, brew install ffmpeg, …)',
  '  3. FFMPEG_PATH=/path/to/ffmpeg in the environment (or the ffmpegPath option)',
].join('\n');
interface FfmpegInfo {
  /** The first line of `-version`. */
  readonly version: string;
  /** The last year of its copyright line (its release year), if it prints one. */
  readonly year: number | undefined;
}
const verified = new Map<string, Promise<FfmpegInfo>>();
/** Made on the first package lookup, not at import: the module stays loadable where `createRequire` is missing. */
let requireHere: NodeJS.Require | undefined;

/**
 * Find a working ffmpeg, in this order: `options.ffmpegPath`, env `FFMPEG_PATH`, the
 * `ffmpeg-static` package (if installed), then `ffmpeg` on `PATH` when it is newer than the
 * bundled `@ffmpeg-installer/ffmpeg` binary (a 2018 build), else the bundled one, and `PATH`
 * as the last resort.
 *
 * - A candidate is accepted when the file exists, is executable and `<path> -version` exits 0
 *   printing `ffmpeg version`; that check runs once per path per process (cached).
 * - "Newer" compares the release year each binary prints in its copyright line; a binary that
 *   prints none is not taken to be newer.
 * - Packages are optional: a package that is not installed is skipped (and listed as tried).
 * - Rejects with `AudioSourceError('ffmpeg_not_found')` whose message lists every place tried
 *   and why each was refused, then the three ways to get one: the bundled optional dependency
 *   `@ffmpeg-installer/ffmpeg`, a system ffmpeg on `PATH`, or `FFMPEG_PATH`.
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
  const attempt = async (path: string, source: string): Promise<(ResolvedFfmpeg & { year: number | undefined }) | undefined> => {
    try {
      const { version, year } = await ffmpegInfo(path);
      return { path, source, version, year };
    } catch (err) {
      tried.push(`${source}: ${path} (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  };

  if (options.ffmpegPath !== undefined) {
    const found = await attempt(options.ffmpegPath, 'option');
    if (found) return strip(found);
  } else {
    tried.push('option: not given');
  }

  const fromEnv = env['FFMPEG_PATH'];
  if (fromEnv) {
    const found = await attempt(fromEnv, 'env FFMPEG_PATH');
    if (found) return strip(found);
  } else {
    tried.push('env FFMPEG_PATH: not set');
  }

  const fromPackages = async (pkgs: readonly string[]) => {
    for (const pkg of pkgs) {
      const path = packageBinary(pkg);
      if (typeof path !== 'string') {
        tried.push(`package ${pkg}: ${path.reason}`);
        continue;
      }
      const found = await attempt(path, `package ${pkg}`);
      if (found) return found;
    }
    return undefined;
  };
  const preferred = await fromPackages(options.packages ?? DEFAULT_FFMPEG_PACKAGES);
  if (preferred) return strip(preferred);

  const bundled = await fromPackages(options.fallbackPackages ?? DEFAULT_FFMPEG_FALLBACK_PACKAGES);
  const dirs = (env['PATH'] ?? '').split(delimiter).filter((d) => d.length > 0);
  const names = process.platform === 'win32' ? ['ffmpeg.exe'] : ['ffmpeg'];
  let onPath = false;
  for (const dir of dirs) {
    for (const name of names) {
      const path = join(dir, name);
      if (!(await isFile(path))) continue;
      onPath = true;
      const found = await attempt(path, 'PATH');
      if (!found) continue;
      // The system binary wins only when it is newer than the bundled one (or that one failed).
      if (bundled && !(found.year !== undefined && (bundled.year === undefined || found.year > bundled.year))) {
        tried.push(`PATH: ${path} (not newer than ${bundled.source})`);
        return strip(bundled);
      }
      return strip(found);
    }
  }
  if (!onPath) tried.push(`PATH: no ffmpeg in ${dirs.length > 0 ? dirs.join(delimiter) : '(empty PATH)'}`);
  if (bundled) return strip(bundled);

  throw new AudioSourceError(
    'ffmpeg_not_found',
    `no working ffmpeg found. Tried, in order:\n  - ${tried.join('\n  - ')}\n${FFMPEG_REMEDIES}`,
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
export async function verifyFfmpeg(path: string): Promise<string> {
  return (await ffmpegInfo(path)).version;
}

function strip({ path, source, version }: ResolvedFfmpeg): ResolvedFfmpeg {
  return { path, source, version };
}

function ffmpegInfo(path: string): Promise<FfmpegInfo> {
  let check = verified.get(path);
  if (!check) {
    check = runVersion(path);
    verified.set(path, check);
    // A failure is not cached: the binary may be installed or fixed later.
    check.catch(() => verified.delete(path));
  }
  return check;
}

async function runVersion(path: string): Promise<FfmpegInfo> {
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
  const year = /Copyright \(c\) (?:\d{4}-)?(\d{4})/i.exec(output)?.[1];
  return { version: first, year: year === undefined ? undefined : Number(year) };
}

function packageBinary(pkg: string): string | { reason: string } {
  let mod: unknown;
  try {
    mod = (requireHere ??= createRequire(import.meta.url))(pkg);
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
