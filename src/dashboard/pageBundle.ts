// The dashboard page's script, bundled by esbuild from ./page/main.ts: at build time into
// dist/dashboard/page.bundle.js (`npm run build`, so an installed package needs no bundler),
// or once per process when running from the sources (tests, tsx), where esbuild is installed.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InputError } from '../errors.js';

const BUNDLE = fileURLToPath(new URL('./page.bundle.js', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../src/dashboard/page/main.ts', import.meta.url));

/** Bundle the page's script for browsers (ES2020, minified, one IIFE); write it to `outfile` when given. */
export async function bundlePage(outfile?: string): Promise<string> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]!.text;
  if (outfile !== undefined) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(outfile, text);
  }
  return text;
}

let cached: Promise<string> | undefined;

/** The page's script: the built bundle next to this module, else bundled from the sources (cached). */
export function pageScript(): Promise<string> {
  return (cached ??= (async () => {
    if (existsSync(BUNDLE)) return readFileSync(BUNDLE, 'utf8');
    if (!existsSync(ENTRY)) throw new InputError('file_not_found', `the dashboard page script is missing (${BUNDLE}); build the package with npm run build`);
    return bundlePage();
  })());
}
