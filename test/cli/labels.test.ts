// What made the results, as the CLI says it: `svc-stream emulator --scenario sample` running as
// its own command (another shell, in effect) and `analyze` from outside it, on the sample call
// (scripted) and on one's own speech (espeak-ng: not the scenario's audio, so speech segments
// only, said as such); the same label in the --json label and state lines, in the live view's
// status area and in the summary. The embedded emulator with no fault says no resume note.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from './runCli.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-cli-labels-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OWN_NOTE = 'speech segments only: this audio is not call.wav, which scenario call.scenario.json scripts';
const SCRIPTED_TEXT = 'scenario call.scenario.json (scripted results, not an analysis of this audio)';
const OWN_TEXT = `emulator: ${OWN_NOTE}`;

const json = (out: string): Array<Record<string, unknown>> => out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
const plain = (screen: string): string => screen.replace(/\x1b\[[\d;?]*[A-Za-z]/g, '');

/** The status area's `source:` lines drawn while the session ran (before the summary), each cut to the terminal's 100 columns. */
const liveSourceLines = (r: CliRun): string[] => plain(r.stdout.split('── transcript')[0]!).split('\n').filter((l) => l.startsWith('source: '));
/** Whether every line is `text`, or its start cut with an ellipsis to the terminal's width. */
const allRead = (lines: readonly string[], text: string): boolean => lines.length > 0 && lines.every((l) => l === text || (l.endsWith('…') && l.length === 100 && text.startsWith(l.slice(0, -1))));
const summarySource = (r: CliRun): string | undefined => /^source\s+(.*)$/m.exec(plain(r.stdout.split('── summary').at(-1)!))?.[1];

describe('analyze against an emulator playing the sample scenario in another command', () => {
  it('the sample call is labelled scripted, one\'s own speech by what happened: in --json and the live view alike', async () => {
    const own = join(dir, 'mine.wav');
    execFileSync('espeak-ng', ['-w', own, 'Good morning. I am calling about an order I placed last week; it has not arrived yet, and the tracking page says nothing.'], { timeout: 20_000 });
    const controller = new AbortController();
    const runs: Record<string, CliRun> = {};
    const emulator = await runCli(['emulator', '--scenario', 'sample'], {
      signal: controller.signal,
      whileRunning: async (stdout) => {
        while (!stdout().includes('SVC_PLATFORM_API_KEY=')) await new Promise((r) => setTimeout(r, 20));
        const env = Object.fromEntries(stdout().trim().split('\n').filter((l) => /^SVC_\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
        try {
          runs['sampleJson'] = await runCli(['analyze', 'samples/call.wav', '--json'], { env });
          runs['sampleTty'] = await runCli(['analyze', 'samples/call.wav'], { env, tty: true });
          runs['ownJson'] = await runCli(['analyze', own, '--json'], { env });
          runs['ownTty'] = await runCli(['analyze', own], { env, tty: true });
          runs['ownPiped'] = await runCli(['analyze', own], { env });
        } finally {
          controller.abort();
        }
      },
    });
    expect(emulator.code).toBe(0);
    for (const [name, r] of Object.entries(runs)) expect(r.code, `${name}: ${r.stderr}`).toBe(0);

    // --json: a label line before the first event, the same label on the state line.
    const sample = json(runs['sampleJson']!.stdout);
    expect(sample[0]).toEqual({ type: 'label', source: 'scenario', file: 'call.scenario.json', text: SCRIPTED_TEXT });
    expect(sample.at(-1)).toMatchObject({ type: 'state', source: 'scenario', label: { source: 'scenario', file: 'call.scenario.json' } });
    const mine = json(runs['ownJson']!.stdout);
    expect(mine[0]).toEqual({ type: 'label', source: 'emulator', note: OWN_NOTE, text: OWN_TEXT });
    expect(mine.filter((l) => l['type'] === 'label')).toHaveLength(1);
    expect(mine.at(-1)).toMatchObject({ type: 'state', source: 'emulator', label: { source: 'emulator', note: OWN_NOTE } });
    // Speech segments of that audio, and nothing scripted.
    expect(mine.filter((l) => l['type'] === 'clip').length).toBeGreaterThan(0);
    expect(mine.filter((l) => l['type'] === 'conversation_type' || l['type'] === 'topics')).toEqual([]);

    // The live view: the same words in the status area while it runs and in the summary.
    expect(allRead(liveSourceLines(runs['sampleTty']!), `source: ${SCRIPTED_TEXT}`), liveSourceLines(runs['sampleTty']!).join('\n')).toBe(true);
    expect(summarySource(runs['sampleTty']!)).toBe(SCRIPTED_TEXT);
    expect(allRead(liveSourceLines(runs['ownTty']!), `source: ${OWN_TEXT}`), liveSourceLines(runs['ownTty']!).join('\n')).toBe(true);
    expect(summarySource(runs['ownTty']!)).toBe(OWN_TEXT);
    // Piped: the first line.
    expect(runs['ownPiped']!.stdout.split('\n')[0]).toBe(`source: ${OWN_TEXT}`);
    for (const r of Object.values(runs)) expect(r.stdout).not.toMatch(/resumed/);
  }, 120_000);
});

describe('the embedded emulator', () => {
  it('with no fault, no resume note: the sample is scripted, one\'s own audio is speech segments only', async () => {
    const sample = await runCli(['analyze', '--sample', '--json']);
    expect(sample.code).toBe(0);
    expect(json(sample.stdout).at(-1)).toMatchObject({ source: 'scenario', label: { source: 'scenario', file: 'call.scenario.json' } });
    const own = join(dir, 'other.wav');
    execFileSync('espeak-ng', ['-w', own, 'Hello, this is a test of my own audio.'], { timeout: 20_000 });
    const mine = await runCli(['analyze', own, '--scenario', 'sample', '--json']);
    expect(mine.code).toBe(0);
    expect(json(mine.stdout).at(-1)).toMatchObject({ source: 'emulator', label: { source: 'emulator', note: OWN_NOTE } });
    for (const r of [sample, mine]) expect(r.stdout + r.stderr).not.toMatch(/resumed segment/);
  }, 60_000);
});
