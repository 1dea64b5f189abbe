// Child process for the fleet tests: a relay serving what is published to Redis, as a relay
// process of the fleet would run it. Prints its URL as one line once it listens; closes on SIGTERM.
// Usage: node --import tsx test/fleet/relayProcess.ts REDIS_URL PREFIX [PORT]
import { createRelay } from '../../src/relay/server.js';

const [from, prefix, port] = process.argv.slice(2);
const relay = createRelay({ token: null, from, prefix, heartbeatMs: 60_000 });
const { url } = await relay.listen({ port: Number(port ?? 0) });
process.stdout.write(`${url}\n`);
process.once('SIGTERM', () => void relay.close().then(() => process.exit(0)));
