// The public API is a deliberate list: each entry point's export names are compared with a
// committed snapshot, so every change to the API is a visible diff in review.
// After a deliberate change: UPDATE_EXPORTS=1 npx vitest run test/package/exports.test.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const SNAPSHOT = fileURLToPath(new URL('./exports.snapshot.json', import.meta.url));

export async function exportNames(): Promise<Record<string, string[]>> {
  const entries = {
    'svc-stream': await import('../../src/index.js'),
    'svc-stream/operators': await import('../../src/operators/index.js'),
    'svc-stream/emulator': await import('../../src/emulator/index.js'),
  };
  return Object.fromEntries(Object.entries(entries).map(([name, mod]) => [name, Object.keys(mod).sort()]));
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
  for (const entry of ['../../src/index.ts', '../../src/operators/index.ts']) {
    const reached = [...staticGraph(fileURLToPath(new URL(entry, import.meta.url)))].map((f) => f.replace(/^.*\/src\//, 'src/'));
    expect(reached.filter((f) => f.startsWith('src/emulator/') || f.startsWith('src/cli/'))).toEqual([]);
  }
  const reach = (entry: string) => [...staticGraph(fileURLToPath(new URL(entry, import.meta.url)))].map((f) => f.replace(/^.*\/src\//, 'src/'));
  expect(reach('../../src/cli/main.ts').filter((f) => f.startsWith('src/emulator/'))).toEqual([]);
  expect(reach('../../src/dashboard/server.ts').filter((f) => f.startsWith('src/cli/'))).toEqual([]);
});

it('the Redis and BullMQ packages are never imported statically: a client that does not use them never loads them', () => {
  const entries = ['../../src/index.ts', '../../src/operators/index.ts', '../../src/cli/main.ts'];
  for (const entry of entries) {
    for (const file of staticGraph(fileURLToPath(new URL(entry, import.meta.url)))) {
      const text = readFileSync(file, 'utf8');
      const bare = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^.'][^']*)'/gm)].map((m) => m[1]);
      expect({ file: file.replace(/^.*\/src\//, 'src/'), bare: bare.filter((b) => /^(ioredis|redis-semaphore|bullmq)(\/|$)/.test(b!)) }).toEqual({ file: file.replace(/^.*\/src\//, 'src/'), bare: [] });
    }
  }
});
