// SIPp (Debian's sip-tester) as the caller: a scenario of the fixtures with its placeholders
// filled, run in a directory of its own (SIPp writes its logs where it runs), bounded in time.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawned } from '../../cli/spawned.js';
import { SAMPLE_MULAW } from '../helpers.js';

/** A raw mu-law file of the sample's first `seconds` (SIPp's rtp_stream plays it as PCMU). */
export function mulawFile(dir: string, seconds: number, offsetBytes = 0): string {
  const path = join(dir, `call-${seconds}s.ul`);
  writeFileSync(path, readFileSync(SAMPLE_MULAW).subarray(offsetBytes, offsetBytes + seconds * 8000));
  return path;
}

export interface SippRun {
  readonly code: number | null;
  readonly errors: string;
}

/**
 * Run scenario `name` (test/telephony/fixtures/sip/NAME.xml) against 127.0.0.1:`port` with
 * `args` (-m, -r, -d …), its `[key]` placeholders replaced by `fill`. Resolves when SIPp exits
 * (0: every call passed), killing it after `ms`.
 */
export function runSipp(name: string, port: number, fill: Readonly<Record<string, string>>, args: readonly string[], ms = 60_000): Promise<SippRun> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sipp-'));
  let scenario = readFileSync(new URL(`../fixtures/sip/${name}.xml`, import.meta.url), 'utf8');
  for (const [k, v] of Object.entries(fill)) scenario = scenario.split(`[${k}]`).join(v);
  writeFileSync(join(dir, `${name}.xml`), scenario);
  const child = spawned('sipp', ['-sf', `${name}.xml`, '-i', '127.0.0.1', '-mi', '127.0.0.1', '-p', '0', '-nostdin', '-trace_err', '-timeout', `${Math.ceil(ms / 1000)}s`, '-timeout_error', ...args, `127.0.0.1:${port}`], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => child.kill('SIGKILL'), ms + 5000);
    child.on('error', (err) => {
      clearTimeout(t);
      reject(new Error(`sipp could not start (${err.message}): install Debian's sip-tester (.ci/run does)`));
    });
    child.on('exit', (code) => {
      clearTimeout(t);
      let errors = stderr;
      try {
        for (const f of readdirSync(dir)) if (f.endsWith('_errors.log')) errors += readFileSync(join(dir, f), 'utf8');
      } catch {
        /* none */
      }
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, errors: errors.slice(-4000) });
    });
  });
}
