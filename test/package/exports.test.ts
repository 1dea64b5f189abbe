// The shape of the public API: how many runtime names each entry has, which entry may repeat
// which, what each entry's import graph may reach, and which way imports run between areas.
// The API itself (every name, type and signature) is written down per entry in api/*.api.md
// by scripts/api-report.mjs, which npm test runs: a change to it is a diff there.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };

/** Every entry point package.json declares, as `[specifier, source file]`: '.' is src/index.ts, './x' is src/x/index.ts. */
export const ENTRIES: ReadonlyArray<readonly [string, string]> = Object.keys(PACKAGE.exports)
  .filter((key) => key !== './package.json')
  .map((key) => [key === '.' ? 'svc-stream' : `svc-stream/${key.slice(2)}`, fileURLToPath(new URL(key === '.' ? '../../src/index.ts' : `../../src/${key.slice(2)}/index.ts`, import.meta.url))]);

export async function exportNames(): Promise<Record<string, string[]>> {
  const names: Record<string, string[]> = {};
  for (const [spec, file] of ENTRIES) names[spec] = Object.keys((await import(pathToFileURL(file).href)) as object).sort();
  return names;
}

it('the main entry is a front door: at most 60 runtime names, none of them a zod schema', async () => {
  const names = (await exportNames())['svc-stream']!;
  expect(names.length).toBeLessThanOrEqual(60);
  expect(names.filter((n) => n.endsWith('Schema'))).toEqual([]);
});

/**
 * Deprecated names still in src/, each with the change that removes it. 1.0 ships none: when
 * one goes, take its line out (the test says so), and no new one may come.
 */
const PENDING_DEPRECATIONS: Readonly<Record<string, string>> = {
};

it('no name is deprecated before 1.0, but those whose removal is under way', () => {
  const dir = fileURLToPath(new URL('../../src/', import.meta.url));
  const deprecated = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && readFileSync(`${dir}${f}`, 'utf8').includes('@deprecated'))
    .map((f) => `src/${f}`)
    .sort();
  expect(deprecated).toEqual(Object.keys(PENDING_DEPRECATIONS).sort());
});

it('every zod schema of the contract is exported by svc-stream/schema', async () => {
  const schema = new Set((await exportNames())['svc-stream/schema']);
  const dir = fileURLToPath(new URL('../../src/schema/', import.meta.url));
  const declared = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
    .flatMap((f) => [...readFileSync(`${dir}${f}`, 'utf8').matchAll(/^export const (\w+Schema)\b/gm)].map((m) => m[1]!));
  expect(declared.length).toBeGreaterThan(40);
  expect(declared.filter((n) => !schema.has(n))).toEqual([]);
});

it('no name says it is internal, and the main entry carries no emulator', async () => {
  const names = await exportNames();
  for (const list of Object.values(names)) for (const n of list) expect(n).not.toMatch(/internal|^_/i);
  for (const n of names['svc-stream']!) expect(n).not.toMatch(/^PAGE_|^oggCrc$|^readField$|^sendJson$|^clearFfmpegCache$|^timestampDelta$/);
  expect(names['svc-stream']).not.toContain('startEmulator');
  expect(names['svc-stream/emulator']).toContain('startEmulator');
});

/** Every module a file loads through static relative imports (not `import()`, not `import type`). */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+'(\.[^']+)'/gm)) {
      stack.push(fileURLToPath(new URL(m[1]!.replace(/\.js$/, '.ts'), pathToFileURL(file))));
    }
  }
  return seen;
}

it('the client entries never load the emulator or the CLI (the CLI loads the emulator lazily)', () => {
  for (const [spec, entry] of ENTRIES) {
    if (spec === 'svc-stream/emulator') continue;
    const reached = [...staticGraph(entry)].map((f) => f.replace(/^.*\/src\//, 'src/'));
    expect(reached.filter((f) => f.startsWith('src/emulator/') || f.startsWith('src/cli/'))).toEqual([]);
  }
  const reach = (entry: string) => [...staticGraph(fileURLToPath(new URL(entry, import.meta.url)))].map((f) => f.replace(/^.*\/src\//, 'src/'));
  expect(reach('../../src/cli/main.ts').filter((f) => f.startsWith('src/emulator/'))).toEqual([]);
  expect(reach('../../src/dashboard/server.ts').filter((f) => f.startsWith('src/cli/'))).toEqual([]);
});

it('the Redis and BullMQ packages are never imported statically: a client that does not use them never loads them', () => {
  const entries = [...ENTRIES.filter(([spec]) => spec !== 'svc-stream/emulator').map(([, file]) => file), fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))];
  for (const entry of entries) {
    for (const file of staticGraph(entry)) {
      const text = readFileSync(file, 'utf8');
      const bare = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^.'][^']*)'/gm)].map((m) => m[1]);
      expect({ file: file.replace(/^.*\/src\//, 'src/'), bare: bare.filter((b) => /^(ioredis|redis-semaphore|bullmq)(\/|$)/.test(b!)) }).toEqual({ file: file.replace(/^.*\/src\//, 'src/'), bare: [] });
    }
  }
});

it('the built declarations of every entry but the fleet name no optional package, nor sdp-transform, whose types are a dev dependency (a strict TypeScript user without ioredis or @types/sdp-transform compiles)', () => {
  // dist/ is what `npm test` builds (tsc -p tsconfig.build.json) just before vitest runs; the
  // consumer test (npm run test:package) checks the same on an installed tarball, more slowly.
  const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
  expect(existsSync(dist), 'build first: npm run build').toBe(true);
  for (const [spec, entry] of ENTRIES) {
    if (spec === 'svc-stream/fleet') continue;
    const start = entry.replace(/\/src\//, '/dist/').replace(/\.ts$/, '.d.ts');
    const via = new Map<string, string | undefined>([[start, undefined]]);
    const stack = [start];
    while (stack.length > 0) {
      const file = stack.pop()!;
      for (const m of readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)) {
        const target = m[1]!;
        if (/^(ioredis|redis-semaphore|bullmq|sdp-transform)(\/|$)/.test(target)) {
          const chain: string[] = [];
          for (let f: string | undefined = file; f !== undefined; f = via.get(f)) chain.unshift(f.replace(/^.*\/dist\//, 'dist/'));
          expect.fail(`${spec}: ${chain.join(' -> ')} imports ${target}`);
        }
        if (!target.startsWith('.')) continue;
        const next = fileURLToPath(new URL(target.replace(/\.js$/, '.d.ts'), pathToFileURL(file)));
        if (via.has(next)) continue;
        via.set(next, file);
        stack.push(next);
      }
    }
  }
});

it('the main entry is the streaming core: it loads no other area (batch calls, jobs, telephony, dashboard, relay, fleet)', () => {
  const reached = [...staticGraph(fileURLToPath(new URL('../../src/index.ts', import.meta.url)))].map((f) => f.replace(/^.*\/src\//, 'src/'));
  const areas = reached.filter((f) => /^src\/(batch|platform|telephony|dashboard|relay|fleet)\//.test(f));
  expect(areas).toEqual([]);
  expect(reached).toContain('src/session/conversation.ts');
});

/** The relative imports (static, `import type` included) of every file under `dir`, as [file, target] from src/. */
function importsUnder(dir: string): Array<readonly [string, string]> {
  const base = fileURLToPath(new URL(`../../src/${dir}/`, import.meta.url));
  const out: Array<readonly [string, string]> = [];
  for (const f of readdirSync(base, { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.ts'))) {
    const file = `${base}${f}`;
    for (const m of readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gm)) {
      const target = fileURLToPath(new URL(m[1]!.replace(/\.js$/, '.ts'), pathToFileURL(file)));
      out.push([`src/${dir}/${f}`, target.replace(/^.*\/src\//, 'src/')]);
    }
  }
  return out;
}

it('imports run one way: batch/ takes nothing from session/, no area takes the Semaphore or SessionState through another', () => {
  expect(importsUnder('batch').filter(([, t]) => t.startsWith('src/session/'))).toEqual([]);
  // The shared pieces live at the root (src/concurrency/) and in schema/; the
  // fleet's batch queue is a queue of batch calls, and takes only those from batch/.
  for (const dir of ['session', 'telephony', 'relay', 'dashboard', 'state', 'operators', 'audio', 'schema', 'internal']) {
    expect(importsUnder(dir).filter(([, t]) => t.startsWith('src/batch/'))).toEqual([]);
  }
  expect(importsUnder('fleet').filter(([, t]) => t.startsWith('src/batch/') && !/^src\/batch\/(calls|request|retry)\.ts$/.test(t))).toEqual([]);
  // schema/ and internal/ are the bottom: they reach no area (internal/ may reach audio's flow and meta).
  expect(importsUnder('schema').filter(([, t]) => !/^src\/(schema|internal|errors)\//.test(t) && t !== 'src/warnings.ts')).toEqual([]);
  const text = (f: string) => readFileSync(fileURLToPath(new URL(`../../${f}`, import.meta.url)), 'utf8');
  for (const f of ['src/relay/relaySession.ts', 'src/dashboard/server.ts', 'src/session/resilientSession.ts']) expect(text(f)).not.toMatch(/SessionState[^;]*from '\.\/streamingSession\.js'|SessionState[^;]*from '\.\.\/session\/streamingSession\.js'/);
  expect(text('src/session/streamingSession.ts')).not.toMatch(/export type \{[^}]*SessionState/);
});

it('imports run one way between the live areas: telephony takes nothing from fleet/ or relay/, fleet/ nothing from relay/', () => {
  // What they share sits below them: the session id rule (schema/sessionId.ts), the relay's
  // wire (schema/relay.ts), the publishing seam (publishing.ts). The relay reads the fleet
  // (relay/fleetSource.ts), the dashboard is built on the relay, the CLI wires them all.
  const reaches = (dir: string, areas: RegExp) => importsUnder(dir).filter(([, t]) => areas.test(t));
  expect(reaches('telephony', /^src\/(fleet|relay|dashboard|cli)\//)).toEqual([]);
  expect(reaches('fleet', /^src\/(relay|dashboard|telephony|cli)\//)).toEqual([]);
  expect(reaches('relay', /^src\/(dashboard|telephony|cli)\//)).toEqual([]);
  for (const dir of ['session', 'audio', 'state', 'operators', 'batch', 'platform']) expect(reaches(dir, /^src\/(fleet|relay|dashboard|telephony|cli)\//)).toEqual([]);
});

/** Entries that deliberately repeat names of others: each may repeat only the entries listed. */
const REPEATS: Readonly<Record<string, readonly string[]>> = {
  // The browser entry is made of barrels the others export: the events of the schema entry,
  // the reducers, the main entry's derived streams and errors, the relay's client.
  'svc-stream/browser': ['svc-stream', 'svc-stream/schema', 'svc-stream/state', 'svc-stream/relay'],
};

it('each name is exported by one entry only (the browser entry repeats the barrels it is made of)', async () => {
  const names = await exportNames();
  const owners = new Map<string, string[]>();
  for (const [spec, list] of Object.entries(names)) for (const n of list) owners.set(n, [...(owners.get(n) ?? []), spec]);
  const allowed = (a: string, b: string) => REPEATS[a]?.includes(b) === true || REPEATS[b]?.includes(a) === true;
  const repeated: string[] = [];
  for (const [n, specs] of owners) {
    for (let i = 0; i < specs.length; i++) for (let j = i + 1; j < specs.length; j++) if (!allowed(specs[i]!, specs[j]!)) repeated.push(`${n}: ${specs[i]} and ${specs[j]}`);
  }
  expect(repeated).toEqual([]);
});

it('the browser entry reaches no Node built-in, and no package but rxjs and zod', () => {
  const reached = [...staticGraph(fileURLToPath(new URL('../../src/browser/index.ts', import.meta.url)))];
  for (const file of reached) {
    const text = readFileSync(file, 'utf8');
    const bare = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^.'][^']*)'/gm)].map((m) => m[1]!);
    expect({ file: file.replace(/^.*\/src\//, 'src/'), bare: bare.filter((b) => b.startsWith('node:') || !/^(rxjs|zod)(\/|$)/.test(b)) }).toEqual({ file: file.replace(/^.*\/src\//, 'src/'), bare: [] });
  }
});
