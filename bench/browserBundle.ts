// What a page pays for 'svc-stream/browser': esbuild bundles (browser platform, ESM, minified,
// the options a web developer would use) of the whole entry and of a few imports from it, with
// the minified and gzip sizes and how much of each is zod and rxjs (from esbuild's metafile).
// Run: npx tsx bench/browserBundle.ts
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = fileURLToPath(new URL('../src/browser/index.ts', import.meta.url));
/** The budget of issue 26: splitSession plus the relay client, gzip. */
const BUDGET_GZIP = 40 * 1024;

const CASES: ReadonlyArray<readonly [string, string]> = [
  ['browser entry, whole', `export * from ${JSON.stringify(ENTRY)};`],
  ['splitSession only', `export { splitSession } from ${JSON.stringify(ENTRY)};`],
  ['one reducer only (clipsReducer)', `export { clipsReducer } from ${JSON.stringify(ENTRY)};`],
  ['splitSession + parseServerEvent', `export { splitSession, parseServerEvent } from ${JSON.stringify(ENTRY)};`],
  ['splitSession + parseServerEvent + error classes', `export { splitSession, parseServerEvent, SessionError, isSvcError } from ${JSON.stringify(ENTRY)};`],
  ['splitSession + the relay client (relayEvents)', `export { splitSession, relayEvents } from ${JSON.stringify(ENTRY)};`],
];

const kb = (n: number): string => `${(n / 1024).toFixed(1)} KB`;

console.log(`esbuild bundles of svc-stream/browser (platform browser, format esm, minify)`);
console.log(`${'bundle'.padEnd(50)} ${'minified'.padStart(10)} ${'gzip'.padStart(10)} ${'zod'.padStart(16)} ${'rxjs'.padStart(16)}`);
for (const [name, contents] of CASES) {
  const r = await build({ stdin: { contents, resolveDir: ROOT, loader: 'ts' }, bundle: true, platform: 'browser', format: 'esm', minify: true, write: false, metafile: true, logLevel: 'silent' });
  if (r.errors.length > 0 || r.warnings.length > 0) throw new Error(`${name}: ${r.errors.length} errors, ${r.warnings.length} warnings`);
  const code = r.outputFiles[0]!.contents;
  const inputs = Object.values(r.metafile.outputs)[0]!.inputs;
  const share = (re: RegExp) => Object.entries(inputs).reduce((sum, [file, i]) => sum + (re.test(file) ? i.bytesInOutput : 0), 0);
  const zod = share(/node_modules\/zod\//);
  const rxjs = share(/node_modules\/rxjs\//);
  const pct = (n: number) => `${kb(n)} ${((100 * n) / code.length).toFixed(0).padStart(2)}%`;
  console.log(`${name.padEnd(50)} ${kb(code.length).padStart(10)} ${kb(gzipSync(code).length).padStart(10)} ${pct(zod).padStart(16)} ${pct(rxjs).padStart(16)}`);
}
console.log(`budget: splitSession + the relay client at most ${kb(BUDGET_GZIP)} gzip (shares are of the minified bytes)`);
