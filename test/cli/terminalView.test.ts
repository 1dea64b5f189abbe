// The terminal view (src/cli/terminalView.ts). Its summary line, directly: the audio actually
// sent after a failure (never the file's length), and the reconnects a session went through.
// Then `svc-stream analyze` on a real terminal, read as a person sees it: the real binary runs
// in a tmux pane (a pseudo-terminal with a screen) and the test reads the screen with
// capture-pane; `script` gives a terminal that reports 0 columns.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createSessionStats } from 'svc-stream';
import { audioSummary, progressText, reconnectSummary } from '../../src/cli/terminalView.js';
import { sessionFigures } from '../../src/session/figures.js';
import { resolveFfmpeg } from '../../src/internal/ffmpegPath.js';
import { initialConversationSnapshot } from '../../src/state/snapshot.js';

describe('terminal summary', () => {
  it('after done: the analysed duration', () => {
    const s = { ...initialConversationSnapshot, aggregates: { ...initialConversationSnapshot.aggregates, audioDurationMs: 38_507 } };
    expect(audioSummary(s, { positionMs: 38_507, durationMs: 38_507 })).toBe('0:38.5 of audio');
  });

  it('after a failure: the audio sent, of the whole, not the whole', () => {
    expect(audioSummary(initialConversationSnapshot, { positionMs: 20_000, durationMs: 332_300 })).toBe('0:20.0 of audio sent (of 5:32.3)');
    expect(audioSummary(initialConversationSnapshot, { positionMs: undefined, durationMs: 332_300 })).toBe('audio sent unknown');
  });

  it('reconnects, their time, and audio dropped when any, as the figures give them', () => {
    const stats = createSessionStats();
    const S16 = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;
    expect(reconnectSummary(sessionFigures({ stats, format: S16, startedAt: 0, now: 0 }))).toBe('');
    // The stats are the session's to write: the figures after two reconnects, as a copy.
    const after = { ...stats, reconnects: 2, reconnectingMs: 1_300, bytesRead: 64_000, bytesDropped: 9_600 };
    expect(reconnectSummary(sessionFigures({ stats: after, format: S16, startedAt: 0, now: 0 }))).toBe(', 2 reconnects (1.3 s), 0.3 s of audio dropped');
    // Bytes when they cannot be told as time; an outage going on now is counted as it runs.
    expect(reconnectSummary(sessionFigures({ stats: { ...after, reconnectingSince: 500 }, startedAt: 0, now: 2_000 }))).toBe(', 2 reconnects (2.8 s), 9600 bytes of audio dropped');
  });

  it('the status line formats the figures: position / duration, percent, rate, ETA', () => {
    expect(progressText({ positionMs: 8_000, durationMs: 60_000, percent: 13, rate: 1, etaMs: 52_000 })).toBe('0:08.0 / 1:00.0  13%  1.0x  ETA 0:52.0');
    expect(progressText({ positionMs: 0, durationMs: 10_000, percent: 0, rate: undefined, etaMs: undefined })).toBe('0:00.0 / 0:10.0  0%');
    expect(progressText({ positionMs: undefined, durationMs: 10_000, percent: undefined, rate: undefined, etaMs: undefined })).toBe('0:00.0 / 0:10.0');
  });
});

const root = fileURLToPath(new URL('../..', import.meta.url));
const SOCKET = `svc-test-${process.pid}`;
const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8', timeout: 10_000 });
}

afterAll(() => {
  if (!hasTmux) return;
  try {
    tmux('kill-server');
  } catch {
    // no server left
  }
});

/** Run `command` in a fresh pane of `cols`×`rows`; poll the screen until `until` matches it. */
async function pane(name: string, command: string, cols: number, rows: number, until: RegExp, watch?: (screen: string) => void): Promise<{ plain: string; styled: string }> {
  tmux('new-session', '-d', '-s', name, '-x', String(cols), '-y', String(rows), `cd ${root} && ${command}; echo "EXIT=$?"; sleep 60`);
  let plain = '';
  try {
    await expect
      .poll(
        () => {
          plain = tmux('capture-pane', '-p', '-t', name);
          watch?.(plain);
          return until.test(plain);
        },
        { timeout: 40_000, interval: 100 },
      )
      .toBe(true);
  } catch {
    tmux('kill-session', '-t', name);
    throw new Error(`the screen never matched ${until}:\n${plain}`);
  }
  const styled = tmux('capture-pane', '-p', '-e', '-t', name);
  tmux('kill-session', '-t', name);
  return { plain, styled };
}

const ANALYZE = 'env -u NO_COLOR -u FORCE_COLOR SVC_API_KEY= SVC_BASE_URL= TERM=xterm-256color node bin/svc-stream.js analyze samples/call.wav --config samples/call.config.json --speed 10 2>/dev/null';

describe.skipIf(!hasTmux)('analyze on a terminal', () => {
  it('shows position, duration, percent, rate and ETA while streaming; scrolls the transcript; ends on the complete transcript and summary, in colour', async () => {
    const statusLines: string[] = [];
    const { plain, styled } = await pane('colour', ANALYZE, 100, 30, /EXIT=\d/, (screen) => {
      const line = screen.split('\n').find((l) => l.startsWith('● streaming'));
      if (line) statusLines.push(line);
    });
    expect(plain).toContain('EXIT=0');
    // While streaming: "● streaming  0:12.3 / 0:38.5  31%  9.8x  ETA 0:02.6  40 events".
    expect(statusLines.some((l) => /\d:\d{2}\.\d \/ 0:38\.5 {2}\d+% {2}[\d.]+x {2}ETA \d:\d{2}\.\d/.test(l))).toBe(true);
    // The end, whole on a 30-row screen: the transcript header, the last clip, the summary.
    expect(plain).toContain('── transcript (10 clips)');
    expect(plain).toContain('Speaker 2 (Customer): No, that\'s all. Thank you so much for your help.');
    expect(plain).toMatch(/^type {7}Billing dispute \(inferred\)$/m);
    expect(plain).toMatch(/^behaviors .*Proper greeting \(1 0:00\.0\)/m);
    expect(plain).toMatch(/^session {4}done, 0:38\.5 of audio in /m);
    // The status area is gone at the end: no stale status line is left on the screen.
    expect(plain).not.toContain('● streaming');
    // Speakers are coloured (cyan and magenta), emotions too.
    expect(styled).toMatch(/\x1b\[(?:\d+;)*36m(?:\x1b\[[\d;]*m)*Speaker 1/);
    expect(styled).toMatch(/\x1b\[(?:\d+;)*35m(?:\x1b\[[\d;]*m)*Speaker 2/);
  }, 60_000);

  it('NO_COLOR turns colour off', async () => {
    const { plain, styled } = await pane('nocolour', ANALYZE.replace('env -u NO_COLOR -u FORCE_COLOR', 'env -u FORCE_COLOR NO_COLOR=1'), 100, 30, /EXIT=\d/);
    expect(plain).toContain('EXIT=0');
    expect(styled).not.toMatch(/\x1b\[(?:\d+;)*3[1-7]m/);
  }, 60_000);
});

describe.skipIf(!hasTmux)('analyze on a terminal, a file it transcodes', () => {
  it('shows the duration the transcoding ffmpeg reported, and runs no other ffmpeg to learn it (one decode check before anything starts, one transcoder)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-terminal-'));
    try {
      const real = (await resolveFfmpeg()).path;
      // .m4a is not a format the service takes (§2.1): the client transcodes it.
      const m4a = join(dir, 'call.m4a');
      execFileSync(real, ['-hide_banner', '-loglevel', 'error', '-i', join(root, 'samples/call.wav'), '-c:a', 'aac', '-b:a', '64k', m4a]);
      // An ffmpeg that logs each run, then runs the real one.
      const log = join(dir, 'runs.log');
      const wrapper = join(dir, 'ffmpeg');
      writeFileSync(wrapper, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${real}' "$@"\n`);
      chmodSync(wrapper, 0o755);
      const statusLines: string[] = [];
      const command = ANALYZE.replace('SVC_API_KEY=', `FFMPEG_PATH='${wrapper}' SVC_API_KEY=`).replace('samples/call.wav', m4a);
      const { plain } = await pane('transcoded', command, 100, 30, /EXIT=\d/, (screen) => {
        const line = screen.split('\n').find((l) => l.startsWith('● streaming'));
        if (line) statusLines.push(line);
      });
      expect(plain).toContain('EXIT=0');
      // AAC pads a little: the duration is 0:38.5 and a few hundredths.
      expect(statusLines.some((l) => /\d:\d{2}\.\d \/ 0:38\.\d {2}\d+%/.test(l))).toBe(true);
      const runsOnTheFile = readFileSync(log, 'utf8').split('\n').filter((l) => l.includes(m4a));
      expect(runsOnTheFile, runsOnTheFile.join('\n')).toHaveLength(2);
      expect(runsOnTheFile[0]).toMatch(/-t 0\.1 -f null -$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('analyze on a terminal that reports 0 columns', () => {
  it('treats the width as unknown: lines are not cut to "…"', async () => {
    const out = await new Promise<string>((resolve, reject) => {
      // `script` makes a pseudo-terminal whose size was never set: 0 columns, 0 rows.
      execFile(
        'script',
        ['-qec', 'node bin/svc-stream.js analyze samples/call.wav --speed 20 2>/dev/null', '/dev/null'],
        { cwd: root, timeout: 40_000, env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '', NO_COLOR: '1', FORCE_COLOR: '' } },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      );
    });
    expect(out).toContain('Northwind Bank support, this is Sam. How can I help?');
    expect(out).toContain('── summary');
    expect(out.split(/\r?\n/).filter((l) => l.trim() === '…')).toEqual([]);
  }, 60_000);
});
