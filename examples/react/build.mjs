// Bundle the React page with esbuild (React and react-dom from npm, JSX compiled by esbuild): `node examples/react/build.mjs` writes dist/app.js
// next to index.html. In your own project 'svc-stream/browser' resolves from node_modules;
// here, inside the library's repository, the root tsconfig.json's paths map it to src/.
import { build } from 'esbuild';

const here = new URL('.', import.meta.url).pathname;
export async function buildExample() {
  const result = await build({
    entryPoints: [`${here}main.tsx`],
    outfile: `${here}dist/app.js`,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    metafile: true,
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  return result.metafile.outputs[Object.keys(result.metafile.outputs)[0]].bytes;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bytes = await buildExample();
  console.log(`examples/react/dist/app.js: ${(bytes / 1024).toFixed(1)} KB`);
}
