// The browser entry as a web developer meets it: bundled by esbuild for the browser with no
// shims or extra options, free of Node built-ins, and running in a real Chromium, where folding
// a session recorded from the emulator ends in the same snapshot as the same fold in Node.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { builtinModules } from 'node:module';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServerEvent } from 'svc-stream/schema';
import { splitSession } from 'svc-stream';
import { browserSkipReason, launchChromium, type LaunchedBrowser } from '../dashboard/browser.js';
import { CALL_SCENARIO, runSession, sample, withEmulator, wsUrl } from '../emulator/helpers.js';
import { foldTexts, type Folded } from './foldApp.js';

const ENTRY = fileURLToPath(new URL('../../src/browser/index.ts', import.meta.url));
const APP = fileURLToPath(new URL('./foldApp.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE_BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/** The options a web developer would pass: nothing beyond bundle, browser, ESM, minify. */
async function bundleForBrowser(contents: string): Promise<{ code: string; metafile: Metafile; warnings: string[] }> {
  const r = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'ts', sourcefile: 'page.ts' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { code: r.outputFiles[0]!.text, metafile: r.metafile, warnings: r.warnings.map((w) => w.text) };
}

describe('the browser entry bundled by esbuild', () => {
  it('builds with no error and no warning, and nothing of Node is left in it', async () => {
    const { code, metafile, warnings } = await bundleForBrowser(`export * from ${JSON.stringify(ENTRY)};`);
    expect(warnings).toEqual([]);
    const output = Object.values(metafile.outputs)[0]!;
    // Everything is in the bundle: no import is left for a page to resolve.
    expect(output.imports).toEqual([]);
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.filter((f) => NODE_BUILTINS.has(f) || f.startsWith('node:'))).toEqual([]);
    expect(inputs.filter((f) => /node_modules\/(?!rxjs\/|zod\/|tslib\/)/.test(f))).toEqual([]);
    expect(code).not.toMatch(/["'`]node:[a-z_/]+["'`]/);
    // A CommonJS require names a module (a string); the error classifier's `/require(s)? …/` is a regex, not a call.
    expect(code).not.toMatch(/\brequire\(\s*["'`]/);
    expect(code).not.toMatch(/\bprocess\.(env|platform|versions)|\bBuffer\.(from|alloc)/);
  });

  it('a page that imports splitSession or a reducer but no parser carries no zod (schemas are dropped when unused)', async () => {
    for (const names of ['splitSession', 'clipsReducer, OrderedMap', 'SessionError, isSvcError']) {
      const { metafile } = await bundleForBrowser(`export { ${names} } from ${JSON.stringify(ENTRY)};`);
      const inputs = Object.values(metafile.outputs)[0]!.inputs;
      const zod = Object.entries(inputs).filter(([file, i]) => file.includes('node_modules/zod/') && i.bytesInOutput > 0);
      expect({ names, zod: zod.map(([file]) => file) }).toEqual({ names, zod: [] });
    }
  });

  it('G.711 bundles for the browser too: alawmulaw resolves to its ESM build, read by name, and no Node call is left', async () => {
    const g711 = fileURLToPath(new URL('../../src/audio/g711.ts', import.meta.url));
    const { code, metafile, warnings } = await bundleForBrowser(`export { mulawEncode, s16leSamples } from ${JSON.stringify(g711)};`);
    expect(warnings).toEqual([]);
    expect(Object.keys(metafile.inputs).filter((f) => f.includes('node_modules/alawmulaw/'))).toContain('node_modules/alawmulaw/index.js');
    expect(code).not.toMatch(/["'`]node:[a-z_/]+["'`]/);
  });

  it('an unbuildable import would be reported: the check is not vacuous', async () => {
    await expect(bundleForBrowser(`import { readFileSync } from 'node:fs'; export const x = readFileSync;`)).rejects.toThrow(/node:fs/);
  });
});

const skip = browserSkipReason();

describe.skipIf(skip !== undefined)('the browser entry in Chromium', () => {
  let texts: string[] = [];
  let server: Server | undefined;
  let browser: LaunchedBrowser | undefined;
  let origin = '';

  beforeAll(async () => {
    // A real session on the emulator, recorded as the text frames a relay would forward.
    const r = await withEmulator({ scenario: CALL_SCENARIO as never }, (emu) => runSession(wsUrl(emu, '/api/svc-2-streaming'), { config: 'default', audio: sample('call.wav'), timeoutMs: 15_000 }));
    texts = r.frames.map((f) => JSON.stringify(f));
    // Plus out-of-contract frames the tolerant parser repairs, and one it refuses.
    texts.push(JSON.stringify({ type: 'clip_update', clip_update: { clip_uuid: 'late', emotion: 7 } }), 'not json');

    const page = await bundleForBrowser(
      `import { splitSession, parseServerEvent } from ${JSON.stringify(ENTRY)};\n` +
        `import { foldTexts } from ${JSON.stringify(APP)};\n` +
        `globalThis.foldRecorded = (texts) => foldTexts(splitSession, parseServerEvent, texts);\n`,
    );
    server = createServer((req, res) => {
      if (req.url === '/app.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(page.code);
      if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>fold</title><script type="module" src="/app.js"></script>');
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('folds the recorded session with splitSession to the same snapshot as Node', async () => {
    expect(texts.length).toBeGreaterThan(20);
    const page = await browser!.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => typeof (globalThis as { foldRecorded?: unknown }).foldRecorded === 'function', undefined, { timeout: 10_000 });
      const inPage = await page.evaluate((t) => (globalThis as unknown as { foldRecorded: (t: string[]) => Promise<Folded> }).foldRecorded(t), texts);
      const inNode = await foldTexts(splitSession, parseServerEvent, texts);
      expect(errors).toEqual([]);
      expect(inPage).toEqual(inNode);
      // The session was a real one: roles, topics and a transcript reached the snapshot.
      const snap = inNode.snapshot as { conversation: { roles: unknown[] }; aggregates: { topics: unknown[] | null; audioDurationMs: number | null } };
      expect(snap.conversation.roles.length).toBeGreaterThan(0);
      expect(snap.aggregates.audioDurationMs).toBeGreaterThan(0);
      expect((inNode.transcript as unknown[]).length).toBeGreaterThan(0);
      expect({ refused: inNode.refused, warnings: inNode.warnings }).toEqual({ refused: 1, warnings: 1 });
    } finally {
      await page.close();
    }
  });
});
