// The live view across a reconnect, as a person watches it: `analyze --realtime` on a terminal
// while its emulator (another process) is SIGKILLed, left down for seconds, and started again on
// the same port. Every status line read off the screen: the position and percentage never go back
// and never pass the whole; while reconnecting the rate and ETA hold (outages are left out); the
// summary's audio is what the service acknowledged (done's duration, the whole file), against the
// wall time the run took, and its time spent reconnecting is the outage the test made (its own
// record: when it killed the emulator, when the new one listened) within the reconnect's delay.
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

/** Every status line drawn, in order: status, position, duration, percent, rate and ETA when shown. */
function statusLines(screen: string): Array<{ status: string; positionMs: number; durationMs: number; percent: number; rate: number | undefined; eta: string | undefined }> {
  const ms = (clock: string): number => {
    const [m, s] = clock.split(':');
    return Math.round((Number(m) * 60 + Number(s)) * 1000);
  };
  const plain = screen.replace(/\x1b\[[\d;]*[A-Za-z]/g, '');
  return [...plain.matchAll(/● (\w+) {2}(\d+:\d{2}\.\d) \/ (\d+:\d{2}\.\d) {2}(-?\d+)%(?: {2}(\d+(?:\.\d)?)x)?(?: {2}ETA (\d+:\d{2}\.\d))?/g)].map((m) => ({
    status: m[1]!,
    positionMs: ms(m[2]!),
    durationMs: ms(m[3]!),
    percent: Number(m[4]),
    rate: m[5] === undefined ? undefined : Number(m[5]),
    eta: m[6],
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
    // The test's own record of the outage.
    let killing = 0;
    let killed = 0;
    let listening = 0;
    const r = await runCli(['analyze', clip, '--realtime'], {
      tty: true,
      env,
      whileRunning: async (stdout) => {
        // Killed 4 s into the call (a crash: no close frame).
        await until(() => statusLines(stdout()).some((l) => l.positionMs >= 4_000), 'position 0:04');
        killing = Date.now();
        await emu.stop('SIGKILL');
        killed = Date.now();
        // Left down while the view draws reconnecting lines (attempts failing meanwhile), then started again.
        await until(() => statusLines(stdout()).filter((l) => l.status === 'reconnecting').length >= 8, 'the view shows reconnecting, eight times');
        emu = await spawnEmulator(port);
        listening = Date.now();
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
    // Past the kill, sending again (streaming, or already finishing: the audio held during the
    // outage goes at once): the position went on from where it was, not from zero.
    const after = lines.slice(lines.findIndex((l) => l.status === 'reconnecting')).find((l) => l.status !== 'reconnecting' && l.status !== 'connecting');
    expect(after?.positionMs).toBeGreaterThanOrEqual(4_000);
    // While reconnecting (seconds of it), the rate and ETA hold: the outage is left out of both
    // (they fell, and the ETA grew, when it was counted as streaming).
    const before = lines.slice(0, lines.findIndex((l) => l.status === 'reconnecting')).filter((l) => l.rate !== undefined).at(-1)!;
    const during = lines.filter((l) => l.status === 'reconnecting');
    expect(during.length).toBeGreaterThan(5);
    for (const l of during) {
      expect([l.rate, l.eta], JSON.stringify([during[0], l])).toEqual([during[0]!.rate, during[0]!.eta]);
      // Close to the last rate before the kill (the moments between that draw and the failure are
      // streaming time without audio: on a loaded machine, a few tenths).
      expect(Math.abs(l.rate! - before.rate!), JSON.stringify([before, l])).toBeLessThanOrEqual(0.5);
    }
    // The summary: the audio the service acknowledged (done's duration on the stream's axis: the
    // whole file) against the wall time the run took (at live pace, never less than the audio),
    // and one reconnect whose time is the outage: from the kill (the first failure) to the first
    // frame the new emulator took, which comes within the reconnect's delay (at most 5 s) of it listening.
    const m = /session\s+done, 0:12\.0 of audio in (\d+):(\d{2}\.\d), 1 reconnect \((\d+\.\d) s\)/.exec(r.stdout);
    expect(m, r.stdout.split('── summary').at(-1)).not.toBeNull();
    expect(Number(m![1]) * 60 + Number(m![2])).toBeGreaterThanOrEqual(12);
    const reconnectingS = Number(m![3]);
    expect(reconnectingS).toBeGreaterThanOrEqual((listening - killed) / 1000 - 0.2);
    expect(reconnectingS).toBeLessThanOrEqual((listening - killing) / 1000 + 5 + 1);
  }, 120_000);
});
