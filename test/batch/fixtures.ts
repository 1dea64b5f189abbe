// Test audio made with ffmpeg into a temp dir, a 101 MB sparse file, and an emulator whose
// request log tells what reached it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startEmulator, type EmulatorOptions, type HttpRoute, type RunningEmulator } from 'svc-stream/emulator';

export const FFMPEG = '/usr/bin/ffmpeg';

export interface AudioDir {
  readonly dir: string;
  /** A tone of `seconds` at `hz`, as `name` (the extension picks the container). */
  tone(name: string, seconds: number, hz?: number): string;
  /** Bytes as a file. */
  bytes(name: string, data: string | Uint8Array): string;
  /** A sparse file of `size` bytes (no disk used). */
  sparse(name: string, size: number): string;
  remove(): void;
}

export function audioDir(): AudioDir {
  const dir = mkdtempSync(join(tmpdir(), 'svc-batch-test-'));
  return {
    dir,
    tone(name, seconds, hz = 440) {
      const path = join(dir, name);
      execFileSync(FFMPEG, ['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=${hz}:duration=${seconds}`, '-ar', '16000', '-ac', '1', path]);
      return path;
    },
    bytes(name, data) {
      const path = join(dir, name);
      writeFileSync(path, data);
      return path;
    },
    sparse(name, size) {
      const path = join(dir, name);
      writeFileSync(path, '');
      truncateSync(path, size);
      return path;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface LoggedEmulator extends RunningEmulator {
  /** `POST /path` lines of every request that reached the server. */
  readonly requests: string[];
  posts(path?: string): number;
}

export async function loggedEmulator(options: EmulatorOptions = {}): Promise<LoggedEmulator> {
  const requests: string[] = [];
  const emu = await startEmulator({ ...options, log: (line) => { if (/^(GET|POST|PUT|DELETE) /.test(line)) requests.push(line); } });
  return Object.assign(emu, {
    requests,
    posts: (path?: string) => requests.filter((l) => l.startsWith('POST ') && (path === undefined || l === `POST ${path}`)).length,
  });
}

/** Answer after the body has been read, as a real server would. */
export function afterBody(req: IncomingMessage, fn: () => void): void {
  req.resume();
  req.once('end', fn);
}

/** A batch route that takes the upload and never answers: only the client can end it. */
export function hanging(path = '/api/svc-2-audio-event-classifier'): { route: HttpRoute; arrived: Promise<void>; closed: Promise<void> } {
  let arrive!: () => void;
  let close!: () => void;
  const arrived = new Promise<void>((r) => (arrive = r));
  const closed = new Promise<void>((r) => (close = r));
  return {
    arrived,
    closed,
    route: {
      method: 'POST',
      path,
      handler: (req, res) => {
        arrive();
        req.resume();
        res.once('close', () => close()); // never answered: only the client can end it
      },
    },
  };
}

/** Emulators for one test file, each closed after its test: call at the top of the file. */
export function emulators(): (options?: EmulatorOptions) => Promise<LoggedEmulator> {
  const running: LoggedEmulator[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.close()));
  });
  return async (options) => {
    const e = await loggedEmulator(options);
    running.push(e);
    return e;
  };
}

/** A temp dir of test audio for one test file, removed after it: call at the top of the file. */
export function audioDirFixture(): () => AudioDir {
  let files: AudioDir | undefined;
  beforeAll(() => {
    files = audioDir();
  });
  afterAll(() => files?.remove());
  return () => files!;
}
