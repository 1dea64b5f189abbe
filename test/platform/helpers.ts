// Shared fixtures for the orchestration tests: an emulator per test with a chosen behavior,
// a request log, and a scripted fetch for virtual-time tests.
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { createPlatformRoutes, type PlatformBehavior } from '../../src/emulator/platformRoutes.js';
import { PlatformClient } from 'svc-stream/platform';

export interface Harness {
  readonly emu: RunningEmulator;
  /** `METHOD /path` of every request the emulator received. */
  readonly requests: string[];
  client(overrides?: { apiKey?: string; fetch?: typeof fetch }): PlatformClient;
}

export async function harness(behavior: PlatformBehavior = {}): Promise<Harness> {
  const requests: string[] = [];
  const emu = await startEmulator({ routes: createPlatformRoutes(behavior), log: (l) => requests.push(l) });
  return {
    emu,
    requests,
    client: (o = {}) =>
      new PlatformClient({ baseUrl: emu.platformUrl, accountUuid: emu.accountUuid, apiKey: o.apiKey ?? emu.platformApiKey, env: {}, ...(o.fetch ? { fetch: o.fetch } : {}) }),
  };
}

export type Scripted = { status: number; body: unknown } | 'network';

/** A fetch that answers from a script (the last entry repeats) and records each call's URL. */
export function scriptedFetch(script: readonly Scripted[]): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  const f = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    calls.push(String(input));
    if (init?.signal?.aborted) throw new DOMException('aborted', 'AbortError');
    const step = script[Math.min(calls.length - 1, script.length - 1)]!;
    if (step === 'network') throw new TypeError('fetch failed');
    return new Response(JSON.stringify(step.body), { status: step.status, headers: { 'content-type': 'application/json' } });
  };
  return { fetch: f as typeof fetch, calls };
}

/** Let promise callbacks (a scripted fetch's answer) run. */
export const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * A clock for the emulator that moves only when told, and a fetch that moves it by `stepMs`
 * before each status request: job states then follow the poll count, not the machine's load.
 */
export function manualClock(): { now: () => number; advance(ms: number): void; ticking(stepMs: number): typeof fetch } {
  let t = 1_000_000;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
    ticking: (stepMs) =>
      ((input: string | URL | Request, init?: RequestInit) => {
        if (String(input).includes('/job_status/')) t += stepMs;
        return fetch(input, init);
      }) as typeof fetch,
  };
}
