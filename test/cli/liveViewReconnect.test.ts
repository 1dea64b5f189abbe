// The live view across a reconnect, as a person watches it: `analyze --realtime` on a terminal
// while its emulator (another process) is SIGKILLed and started again on the same port. Every
// status line read off the screen: the position and percentage never go back and never pass the
// whole; the summary's audio is what the service acknowledged (done's duration, the whole file).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveFfmpeg } from '../../src/internal/ffmpegPath.js';
import { spawnEmulator, type EmulatorProcess } from '../internal/emulatorProcess.js';
import { runCli } from './runCli.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'svc-live-view-'));
const started: EmulatorProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((e) => e.stop('SIGKILL')));
  rmSync(dir, { recursive: true, force: true });
});

/** Every status line drawn, in order: status, position, duration, percent. */
function statusLines(screen: string): Array<{ status: string; positionMs: number; durationMs: number; percent: number }> {
  const ms = (clock: string): number => {
    const [m, s] = clock.split(':');
    return Math.round((Number(m) * 60 + Number(s)) * 1000);
  };
  const plain = screen.replace(/\x1b\[[\d;]*[A-Za-z]/g, '');
  return [...plain.matchAll(/● (\w+) {2}(\d+:\d{2}\.\d) \/ (\d+:\d{2}\.\d) {2}(-?\d+)%/g)].map((m) => ({
    status: m[1]!,
    positionMs: ms(m[2]!),
    durationMs: ms(m[3]!),
    percent: Number(m[4]),
  }));
}

const until = async (what: () => boolean, label: string, ms = 60_000): Promise<void> => {
  await expect.poll(what, { timeout: ms, interval: 50, message: `never: ${label}` }).toBe(true);
};

describe('analyze on a terminal, its emulator killed and restarted mid-call', () => {
  it('position and percentage never go back nor past 100 %; the summary says the audio the service acknowledged', async () => {
    const clip = join(dir, 'twelve.wav');
    execFileSync((await resolveFfmpeg()).path, ['-hide_banner', '-loglevel', 'error', '-i', join(root, 'samples/call.wav'), '-t', '12', '-c:a', 'pcm_s16le', clip]);
    let emu = await spawnEmulator();
    started.push(emu);
    const port = emu.port;
    const env = { SVC_BASE_URL: emu.baseUrl, SVC_API_KEY: emu.apiKey };
    const r = await runCli(['analyze', clip, '--realtime'], {
      tty: true,
      env,
      whileRunning: async (stdout) => {
        // Killed 4 s into the call (a crash: no close frame), started again once the view says it is reconnecting.
        await until(() => statusLines(stdout()).some((l) => l.positionMs >= 4_000), 'position 0:04');
        await emu.stop('SIGKILL');
        await until(() => statusLines(stdout()).some((l) => l.status === 'reconnecting'), 'the view shows reconnecting');
        emu = await spawnEmulator(port);
        started.push(emu);
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/reconnecting \(attempt 1\)/);

    const lines = statusLines(r.stdout);
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.some((l) => l.status === 'reconnecting')).toBe(true);
    for (let i = 1; i < lines.length; i++) {
      expect(lines[i]!.positionMs, JSON.stringify(lines.slice(Math.max(0, i - 2), i + 1))).toBeGreaterThanOrEqual(lines[i - 1]!.positionMs);
      expect(lines[i]!.percent).toBeGreaterThanOrEqual(lines[i - 1]!.percent);
    }
    for (const l of lines) {
      expect(l.durationMs).toBe(12_000);
      expect(l.positionMs).toBeLessThanOrEqual(12_000);
      expect(l.percent).toBeGreaterThanOrEqual(0);
      expect(l.percent).toBeLessThanOrEqual(100);
    }
    // Past the kill, streaming again: the position went on from where it was, not from zero.
    const after = lines.slice(lines.findIndex((l) => l.status === 'reconnecting')).find((l) => l.status === 'streaming');
    expect(after?.positionMs).toBeGreaterThanOrEqual(4_000);
    // The summary: the audio the service acknowledged (done's duration on the stream's axis: the whole file), one reconnect.
    expect(r.stdout).toMatch(/session\s+done, 0:12\.0 of audio in \S+, 1 reconnect \(\d+\.\d s\)/);
  }, 120_000);
});
