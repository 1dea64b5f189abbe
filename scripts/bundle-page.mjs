// Build step (npm run build / prepare): bundle the dashboard pages' scripts next to the
// compiled dashboard, so the installed package serves them without a bundler.
import { bundlePage } from '../dist/dashboard/pageBundle.js';

for (const name of ['page', 'fleet']) {
  const out = new URL(`../dist/dashboard/${name}.bundle.js`, import.meta.url);
  const text = await bundlePage(out.pathname, name);
  console.log(`dist/dashboard/${name}.bundle.js: ${(text.length / 1024).toFixed(1)} KB`);
}
