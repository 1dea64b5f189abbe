// Test audio made with ffmpeg into a temp dir, a 101 MB sparse file, and an emulator whose
// request log tells what reached it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from 'svc-stream/emulator';

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
