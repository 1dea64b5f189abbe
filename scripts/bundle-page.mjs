// Build step (npm run build / prepare): bundle the dashboard page's script next to the
// compiled dashboard, so the installed package serves it without a bundler.
import { bundlePage } from '../dist/dashboard/pageBundle.js';

const out = new URL('../dist/dashboard/page.bundle.js', import.meta.url);
const text = await bundlePage(out.pathname);
console.log(`dist/dashboard/page.bundle.js: ${(text.length / 1024).toFixed(1)} KB`);
