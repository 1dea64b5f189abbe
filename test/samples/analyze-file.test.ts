// samples/analyze-file.ts runs as documented and prints the roles and the transcript.
import { describe, expect, it } from 'vitest';
import { runSample } from './runSample.js';

describe('samples/analyze-file.ts', () => {
  it('prints the roles and the whole transcript of the sample call', async () => {
    const run = runSample('analyze-file');
    expect(await run.exited, run.stderr()).toBe(0);
    const out = run.stdout();
    expect(out).toContain('Roles:\n  speaker 1: Agent\n  speaker 2: Customer\n');
    expect(out).toContain('  [  0.0s] 1 (Agent): Northwind Bank support, this is Sam. How can I help?\n');
    expect(out).toContain('  [ 35.5s] 2 (Customer): No, that\'s all. Thank you so much for your help.\n');
    expect(out.split('\n').filter((l) => /^ {2}\[/.test(l))).toHaveLength(10);
  }, 25_000);
});
