// `svc-stream job` run in-process with injected io, against a started emulator and the
// embedded one.
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/command.js';
import { jobCommand, jobCommands } from '../../../src/cli/commands/job.js';
import { harness, type Harness } from '../../platform/helpers.js';

const CALL = new URL('../../../samples/call.wav', import.meta.url).pathname;

function io(env: NodeJS.ProcessEnv): CliIo & { out(): string; err(): string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  return { stdout, stderr, stdin: Readable.from([]), env, out: () => out, err: () => err };
}
const envOf = (x: Harness, key = x.emu.platformApiKey): NodeJS.ProcessEnv => ({
  SVC_PLATFORM_URL: x.emu.platformUrl,
  SVC_ACCOUNT_UUID: x.emu.accountUuid,
  SVC_PLATFORM_API_KEY: key,
});
const lines = (s: string) => s.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);

let h: Harness | undefined;
afterEach(async () => {
  await h?.emu.close();
  h = undefined;
});

describe('svc-stream job', () => {
  it('is the one command of jobCommands', () => {
    expect(jobCommands).toEqual([jobCommand]);
    expect(jobCommand.name).toBe('job');
  });

  it('job submit samples/call.wav --wait: JSON lines ending in completed, exit 0', async () => {
    h = await harness({ queuedMs: 20, processingMs: 60 });
    const t = io(envOf(h));
    const code = await jobCommand.run(['submit', 'samples/call.wav', '--wait', '--emotion', '--interval-ms', '10'], t);
    // The emulator's answers say they are its own: one line on stderr, stdout stays the JSON.
    expect(t.err()).toBe("svc-stream: source: emulator: stand-ins computed from the signal, not the service's models\n");
    expect(code).toBe(0);
    const out = lines(t.out());
    expect(out[0]).toMatchObject({ job_id: expect.any(String), status: 'queued' });
    const last = out.at(-1)!;
    expect(last.status).toBe('completed');
    expect(last.job_id).toBe(out[0]!.job_id);
    expect(last.results.files[0].duration_ms).toBeGreaterThan(38_000);
    expect(last.results.files[0].emotion_annotation).toBeDefined();
  });

  it('uses the embedded emulator when nothing is configured', async () => {
    const t = io({});
    const code = await jobCommand.run(['submit', CALL, '--wait', '--interval-ms', '20'], t);
    expect(code).toBe(0);
    expect(t.err()).toMatch(/embedded emulator/);
    expect(lines(t.out()).at(-1)!.status).toBe('completed');
  });

  it('submits several files as one job and --realtime without files', async () => {
    h = await harness();
    const multi = io(envOf(h));
    expect(await jobCommand.run(['submit', CALL, CALL], multi)).toBe(0);
    expect(lines(multi.out())[0]!.uploads).toHaveLength(2);
    const rt = io(envOf(h));
    expect(await jobCommand.run(['submit', '--realtime'], rt)).toBe(0);
    expect(lines(rt.out())[0]!.realtime_url).toMatch(/^ws:/);
  });

  it('job status JOB_ID [--wait]', async () => {
    h = await harness({ queuedMs: 0, processingMs: 30 });
    const sub = io(envOf(h));
    await jobCommand.run(['submit', CALL], sub);
    const id = lines(sub.out())[0]!.job_id as string;
    const once = io(envOf(h));
    expect(await jobCommand.run(['status', id], once)).toBe(0);
    expect(lines(once.out())).toHaveLength(1);
    const wait = io(envOf(h));
    expect(await jobCommand.run(['status', id, '--wait', '--interval-ms', '10'], wait)).toBe(0);
    expect(lines(wait.out()).at(-1)!.status).toBe('completed');
  });

  it('exits non-zero with one printError line on a failed job, an unknown job, a deadline', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0, outcome: (j) => (j.filenames[0] === 'call.wav' ? 'failed' : 'never') });
    // `failed` is not contract: the wait runs to its deadline and names the last status.
    const failed = io(envOf(h));
    expect(await jobCommand.run(['submit', CALL, '--wait', '--interval-ms', '10', '--timeout-ms', '200'], failed)).toBe(1);
    expect(failed.err()).toMatch(/^svc-stream: source: emulator: stand-ins .*\nsvc-stream: poll_deadline: job \S+ was not completed within \d+ ms \(last status "failed"\)\n$/);
    const id = lines(failed.out())[0]!.job_id as string;
    const read = io(envOf(h));
    expect(await jobCommand.run(['status', id], read)).toBe(0);
    expect(lines(read.out())[0]!.status).toBe('failed');
    const unknown = io(envOf(h));
    expect(await jobCommand.run(['status', 'no-such-job'], unknown)).toBe(1);
    expect(unknown.err()).toMatch(/^svc-stream: not_found: .*Job not found\.\n$/);
  });

  it('never prints the platform key, even when it is refused', async () => {
    h = await harness();
    const key = 'cli-platform-key-SECRET';
    const t = io(envOf(h, key));
    expect(await jobCommand.run(['submit', CALL, '--wait'], t)).toBe(1);
    expect(t.err()).toMatch(/^svc-stream: invalid_api_key: /);
    expect(t.err() + t.out()).not.toContain(key);
  });

  it('prints usage for --help and refuses bad arguments with exit 2', async () => {
    const help = io({});
    expect(await jobCommand.run(['--help'], help)).toBe(0);
    expect(help.out()).toMatch(/svc-stream job submit FILE/);
    const sub = io({});
    expect(await jobCommand.run(['submit', '--help'], sub)).toBe(0);
    for (const argv of [['submit'], ['submit', '--realtime', CALL], ['status'], ['frobnicate'], ['submit', CALL, '--nope'], ['submit', CALL, '--interval-ms', 'x']]) {
      const t = io({});
      expect(await jobCommand.run(argv, t)).toBe(2);
      expect(t.err()).toMatch(/^svc-stream: invalid_argument: .+\nUsage:\n(?: {2}svc-stream job .+\n)+Run 'svc-stream job --help' for every option\.\n$/);
      expect(t.out()).toBe('');
    }
  });
});

describe('svc-stream job submit, a missing FILE', () => {
  it('is refused before anything starts: exit 2, the one wording', async () => {
    const t = io({});
    expect(await jobCommand.run(['submit', 'no/such.wav'], t)).toBe(2);
    expect(t.err()).toBe('svc-stream: file_not_found: no/such.wav: no such file\n');
    expect(t.out()).toBe('');
  });
});
