// Bytes the relay sends for a 30-minute session against the raw events' NDJSON size (issue 26:
// goal at most 2x). The event stream is the sample call as the emulator answers it (a real
// session on loopback), tiled to 30 minutes of audio: clip ids made unique, times shifted, as a
// longer call would send them. One page reads the whole session from the relay over a real
// socket; every byte its socket reads counts (HTTP head, chunk framing, SSE fields).
//
//   npx tsx bench/relayBytes.ts [--minutes 30]
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { from, lastValueFrom, toArray } from 'rxjs';
import { conversationSession } from '../src/session/conversation.js';
import { fileSource, type BatchConfig, type ServerEvent } from 'svc-stream';
import { startEmulator } from 'svc-stream/emulator';
import { createRelay } from '../src/relay/server.js';
import { machine } from './benchInternals.js';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '30' } } });
const minutes = Number(values.minutes);

/** The sample call's events from a real session on the emulator. */
async function recordedCall(): Promise<ServerEvent[]> {
  const emulator = await startEmulator({ scenario: JSON.parse(readFileSync('samples/call.scenario.json', 'utf8')) as never });
  try {
    const config = JSON.parse(readFileSync('samples/call.config.json', 'utf8')) as BatchConfig;
    return await lastValueFrom(conversationSession(fileSource('samples/call.wav'), { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, config }).pipe(toArray()));
  } finally {
    await emulator.close();
  }
}

/** The call repeated until `ms` of audio: each copy's clips renamed and its times shifted; one `done` at the end. */
function tiled(call: readonly ServerEvent[], ms: number): ServerEvent[] {
  const callMs = (call.find((e) => e.type === 'done') as { duration_ms: number }).duration_ms;
  const out: ServerEvent[] = [];
  const shift = (x: unknown, by: number) => (typeof x === 'number' ? x + by : x);
  for (let copy = 0; copy * callMs < ms; copy++) {
    const by = copy * callMs;
    const rename = (id: unknown) => (typeof id === 'string' ? `${id}-${copy}` : id);
    for (const e of call) {
      if (e.type === 'done') continue;
      const text = JSON.stringify(e, (key, value) => {
        if (key === 'clip_uuid' || key === 'definitive_clip_uuid') return rename(value);
        if (key === 'evidence_clip_uuids' && Array.isArray(value)) return value.map(rename);
        if (key === 'start_ms' || key === 'end_ms') return shift(value, by);
        return value;
      });
      out.push(JSON.parse(text) as ServerEvent);
    }
  }
  out.push({ type: 'done', duration_ms: Math.ceil(ms / callMs) * callMs });
  return out;
}

const call = await recordedCall();
const events = tiled(call, minutes * 60_000);
const ndjson = events.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)) + 1, 0);

const relay = createRelay({ token: 'bench', historyEvents: events.length + 1 });
const session = relay.addSession({ id: 'call' });
const { url } = await relay.listen();
// The page connects first, then the session runs: it sees every event live, as a viewer would.
const read = new Promise<{ socket: number; body: number }>((resolve, reject) => {
  const req = request(`${url}/sessions/call/events`, { headers: { authorization: 'Bearer bench' } }, (res) => {
    let body = 0;
    const socket = res.socket;
    res.on('data', (c: Buffer) => (body += c.length));
    res.on('end', () => resolve({ socket: socket.bytesRead, body }));
  });
  req.on('error', reject);
  req.end();
});
await new Promise((r) => setTimeout(r, 100));
session.setStatus('streaming');
session.feed(from(events));
const got = await read;
await relay.close();

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
console.log(`relay bytes for a ${minutes}-minute session (${events.length} events; the ${call.length}-event sample call tiled)`);
console.log(`raw events as NDJSON          ${kb(ndjson).padStart(10)}`);
console.log(`relay, SSE body (page reads)  ${kb(got.body).padStart(10)}   ${(got.body / ndjson).toFixed(2)}x`);
console.log(`relay, socket bytes read      ${kb(got.socket).padStart(10)}   ${(got.socket / ndjson).toFixed(2)}x   (goal <= 2x)`);
console.log(`relay counter (bytes sent)    ${kb(session.counters.bytesSent).padStart(10)}`);
console.log(machine());
