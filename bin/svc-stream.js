#!/usr/bin/env node
// The svc-stream command. Runs the compiled CLI (npm install builds it through `prepare`).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('svc-stream: the package is not built; run `npm install` (or `npm run build`) first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
const controller = new AbortController();
// SIGHUP too: a closed terminal, or a wrapper (npm exec) passing its hangup on.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => controller.abort());
}
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: controller.signal,
});
process.exitCode = code;
// Nothing the CLI started should keep the process alive once it has answered.
setTimeout(() => process.exit(code), 500).unref();
