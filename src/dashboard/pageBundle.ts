// The dashboard pages' scripts, bundled by esbuild: the call page from ./page/main.ts and the
// supervisor's page from ./page/fleet.ts. At build time into dist/dashboard/*.bundle.js
// (`npm run build`, so an installed package needs no bundler), or once per process when
// running from the sources (tests, tsx), where esbuild is installed.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InputError } from '../errors/index.js';

/** The pages: the call page (`app.js`) and the supervisor's page (`fleet.js`). */
export type PageName = 'page' | 'fleet';

const SOURCES: Record<PageName, string> = { page: 'main.ts', fleet: 'fleet.ts' };
const bundleOf = (name: PageName): string => fileURLToPath(new URL(`./${name}.bundle.js`, import.meta.url));
const entryOf = (name: PageName): string => fileURLToPath(new URL(`../../src/dashboard/page/${SOURCES[name]}`, import.meta.url));

/** Bundle a page's script for browsers (ES2020, minified, one IIFE); write it to `outfile` when given. */
export async function bundlePage(outfile?: string, name: PageName = 'page'): Promise<string> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [entryOf(name)],
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

const cached = new Map<PageName, Promise<string>>();

/** A page's script: the built bundle next to this module, else bundled from the sources (cached). */
export function pageScript(name: PageName = 'page'): Promise<string> {
  let script = cached.get(name);
  if (!script) {
    script = (async () => {
      const bundle = bundleOf(name);
      if (existsSync(bundle)) return readFileSync(bundle, 'utf8');
      if (!existsSync(entryOf(name))) throw new InputError('file_not_found', `the dashboard page script is missing (${bundle}); build the package with npm run build`);
      return bundlePage(undefined, name);
    })();
    cached.set(name, script);
  }
  return script;
}
