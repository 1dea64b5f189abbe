// Child process for the fleet tests: a batch worker whose models API never answers, so it
// takes three jobs and three shared slots and holds them. Prints "holding" once it does.
// Usage: tsx test/fleet/victim.ts REDIS_URL QUEUE REDIS_DOWN_MS
import { createServer } from 'node:http';
import { runBatchWorker } from '../../src/fleet/batchWorker.js';
import { printError } from '../../src/cli/command.js';

const [url, name, redisDownMs] = process.argv.slice(2);
let requests = 0;
const silent = createServer((req) => {
  req.resume();
  if (++requests === 3) process.stdout.write('holding\n');
});
await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
const baseUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
try {
  await runBatchWorker({ url, name, baseUrl, apiKey: process.env['SVC_API_KEY'], concurrency: 3, leaseMs: 1500, lockDurationMs: 1500, stalledIntervalMs: 500, redisDownMs: Number(redisDownMs), retry: false });
  process.exitCode = 0;
} catch (err) {
  printError({ stderr: process.stderr } as never, err);
  process.exitCode = 1;
}
silent.closeAllConnections();
silent.close();
setTimeout(() => process.exit(process.exitCode ?? 0), 200).unref();
