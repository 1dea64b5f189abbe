// Child process for the fleet tests: takes N shared slots, says so, and holds them until killed.
// Usage: tsx test/fleet/holdSlots.ts REDIS_URL N LEASE_MS
import { createRedisLimits } from '../../src/fleet/redisLimiter.js';

const [url, n, leaseMs] = process.argv.slice(2);
const limits = await createRedisLimits({ url, concurrency: 3, leaseMs: Number(leaseMs) });
const limiter = limits.limiterFor({ model: 'audio-event', baseUrl: 'http://fleet.test', apiKey: 'org-a' });
for (let i = 0; i < Number(n); i++) await limiter.acquire();
process.stdout.write('held\n');
setInterval(() => undefined, 1000);
