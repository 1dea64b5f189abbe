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
const force = new AbortController();
// SIGHUP too: a closed terminal, or a wrapper (npm exec) passing its hangup on.
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
if (process.env.SVC_STREAM_WORKER !== undefined && process.send !== undefined) {
  // A worker of `--workers`: a terminal's Ctrl-C (or systemd's SIGTERM to the whole group) reaches
  // it too, but its primary drains it over IPC; it exits with its primary.
  for (const sig of SIGNALS) process.on(sig, () => undefined);
} else {
  // The first signal: a service drains (stops taking calls, lets those in flight end), any other
  // command stops. The second: the service ends its calls at once. A third: exit now.
  let signals = 0;
  for (const sig of SIGNALS) {
    process.on(sig, () => {
      signals++;
      if (signals === 1) controller.abort();
      else if (signals === 2) {
        force.abort();
        setTimeout(() => process.exit(130), 10_000).unref();
      } else process.exit(130);
    });
  }
}
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: controller.signal,
  forceSignal: force.signal,
});
process.exitCode = code;
// Nothing the CLI started should keep the process alive once it has answered.
setTimeout(() => process.exit(code), 500).unref();
