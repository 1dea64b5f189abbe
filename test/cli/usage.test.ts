// Usage mistakes, as a person types them into the real `svc-stream` binary: one wording for
// every command ("svc-stream: invalid_argument: …", then the command's usage), a suggestion for
// a mistyped option or command, never Node's internal ERR_PARSE_ARGS_* codes, exit status 2.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { argsErrorMessage, documentedOptions, suggestOption } from '../../src/cli/usage.js';

const bin = fileURLToPath(new URL('../../bin/svc-stream.js', import.meta.url));

function svc(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { timeout: 15_000, env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '' } }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

describe.concurrent('usage mistakes through the real binary', () => {
  it.each([
    [['analyze', '--sped', '2', 'samples/call.wav'], 'unknown option --sped (did you mean --speed?)', 'Usage: svc-stream analyze [FILE|-] [options]'],
    [['dashboard', '--no-opn'], 'unknown option --no-opn (did you mean --no-open?)', 'Usage: svc-stream dashboard [FILE] [options]'],
    [['events', '--concurency', '2', 'x.wav'], 'unknown option --concurency (did you mean --concurrency?)', 'Usage: svc-stream events'],
    [['job', 'submit', '--wiat', 'x.wav'], 'unknown option --wiat (did you mean --wait?)', 'svc-stream job status JOB_ID'],
    [['rtp', '--prot', '5004'], 'unknown option --prot (did you mean --port?)', 'Usage: svc-stream rtp'],
    [['emulator', '--port'], 'option --port needs a value', 'Usage: svc-stream emulator'],
    [['presets', 'extra'], "unexpected argument 'extra'", 'Usage: svc-stream presets'],
    [['analyze', '--json=yes', 'x.wav'], 'option --json takes no value', 'Usage: svc-stream analyze'],
  ])('%j', async (args, sentence, usage) => {
    const r = await svc(args);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(`svc-stream: invalid_argument: ${sentence}`);
    expect(r.stderr).toContain(usage);
    expect(r.stderr).toContain(`Run 'svc-stream ${args[0]} --help' for every option.`);
    expect(r.stderr).not.toMatch(/ERR_PARSE_ARGS/);
  });

  it('a mistyped command is suggested', async () => {
    const r = await svc(['analyse', 'x.wav']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe("svc-stream: unknown command 'analyse' (did you mean 'analyze'?)");
  });
});

describe('the wording, step by step', () => {
  it('reads the options a usage text documents', () => {
    expect(documentedOptions('  --format F   x\n  --rate HZ  y\n  -h, --help  z')).toEqual(['--format', '--rate', '--help']);
  });

  it('suggests only what is close', () => {
    expect(suggestOption('--sped', ['--speed', '--json'])).toBe('--speed');
    expect(suggestOption('--zzzzzz', ['--speed', '--json'])).toBeUndefined();
    expect(suggestOption('--conf', ['--config', '--json'])).toBe('--config');
  });

  it('passes other errors through unchanged', () => {
    expect(argsErrorMessage(new Error('plain'), '')).toBe('plain');
  });
});
