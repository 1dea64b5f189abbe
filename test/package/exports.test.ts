// The public API is a deliberate list: each entry point's export names are compared with a
// committed snapshot, so every change to the API is a visible diff in review.
// After a deliberate change: UPDATE_EXPORTS=1 npx vitest run test/package/exports.test.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const SNAPSHOT = fileURLToPath(new URL('./exports.snapshot.json', import.meta.url));

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

it('each entry point exports exactly the names in exports.snapshot.json', async () => {
  const names = await exportNames();
  if (process.env['UPDATE_EXPORTS'] === '1') writeFileSync(SNAPSHOT, `${JSON.stringify(names, null, 2)}\n`);
  expect(names).toEqual(JSON.parse(readFileSync(SNAPSHOT, 'utf8')));
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

it('the main entry is the streaming core: it loads no other area (batch calls, jobs, telephony, dashboard, fleet, operators)', () => {
  const reached = [...staticGraph(fileURLToPath(new URL('../../src/index.ts', import.meta.url)))].map((f) => f.replace(/^.*\/src\//, 'src/'));
  // The in-process Semaphore is the main entry's ConcurrencyLimiter; the rest of batch/ is not.
  const areas = reached.filter((f) => /^src\/(batch|platform|telephony|dashboard|fleet|operators)\//.test(f) && f !== 'src/batch/semaphore.ts');
  expect(areas).toEqual([]);
  expect(reached).toContain('src/session/conversation.ts');
});

/** Entries that deliberately repeat names of others: each may repeat only the entries listed. */
const REPEATS: Readonly<Record<string, readonly string[]>> = {
  // The operators entry repeats the session operators it is built on.
  'svc-stream/operators': ['svc-stream'],
  // The browser entry is the page-safe subset of the core, the state operators and the relay's client.
  'svc-stream/browser': ['svc-stream', 'svc-stream/operators', 'svc-stream/relay'],
};

it('each name is exported by one entry only (the operators and browser entries repeat what they are built on)', async () => {
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

it('the browser entry is a subset of the core and the state operators, and reaches no Node built-in', () => {
  const reached = [...staticGraph(fileURLToPath(new URL('../../src/browser/index.ts', import.meta.url)))];
  for (const file of reached) {
    const text = readFileSync(file, 'utf8');
    const bare = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^.'][^']*)'/gm)].map((m) => m[1]!);
    expect({ file: file.replace(/^.*\/src\//, 'src/'), bare: bare.filter((b) => b.startsWith('node:') || !/^(rxjs|zod)(\/|$)/.test(b)) }).toEqual({ file: file.replace(/^.*\/src\//, 'src/'), bare: [] });
  }
});
