// The svc-stream command run from the sources (for the fleet tests' worker processes):
// `node --import tsx test/fleet/cli.ts queue work …`, as bin/svc-stream.js runs the build.
import { main } from '../../src/cli/main.js';

const controller = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => controller.abort());
const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, signal: controller.signal });
process.exitCode = code;
setTimeout(() => process.exit(code), 500).unref();
