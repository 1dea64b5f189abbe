// Keys a server echoes never reach a user: every error is masked where it is built (SvcError),
// for the models API key and the platform key, through batch calls, presets, the
// PlatformClient, streaming sessions and the CLI. Real loopback servers echo the key back.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { inspect } from 'node:util';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { WebSocketServer } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, analyzeConversation, SessionError, SvcError, type ServerEvent } from 'svc-stream';
import { withAudioMeta } from '../src/audio/meta.js';
import { detectAudioEventsAsync, listPresetsAsync } from 'svc-stream/batch';
import { PlatformClient } from 'svc-stream/platform';
import { batchCommands } from '../src/cli/commands/batch.js';
import { startDashboard } from '../src/dashboard/server.js';
import type { CliIo } from '../src/cli/command.js';
import { redact, redactDeep, redactUrl } from '../src/redact.js';
import { json, loopback, tinyWav, type Handler, type Loopback } from './internal/loopback.js';

const KEY = 'sk-live-ECHOED-5b1f0c9e7d';
const PLATFORM_KEY = 'pk-live-ECHOED-a9e4c2d1f0';

/** Every way a user can see an error. */
function shown(err: unknown): string[] {
  const e = err as ApiError;
  return [e.message, JSON.stringify(e.detail) ?? '', JSON.stringify(e.body) ?? '', String(e), JSON.stringify(e), inspect(e, { depth: 8 })];
}

function expectMasked(err: unknown, ...keys: string[]): void {
  expect(err).toBeInstanceOf(SvcError);
  for (const text of shown(err)) for (const key of keys) expect(text).not.toContain(key);
  // The echo did arrive: it was masked, not dropped.
  expect(shown(err).join('\n')).toContain('***');
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: unknown) => err,
  );
}

describe('redact', () => {
  it('remembers nothing: redactUrl masks its URL only, and an error masks only the keys it is given', () => {
    expect(redactUrl(`ws://h/p?api_key=${KEY}&x=1`)).toBe('ws://h/p?api_key=***&x=1');
    // Another session's key does not leak into this error's masking, nor this one's into the next.
    expect(new SvcError('internal_error', `echo ${KEY}`).message).toBe(`echo ${KEY}`);
    expect(new SvcError('internal_error', `echo ${KEY}`, { secrets: [KEY] }).message).toBe('echo ***');
  });

  it('masks a key anywhere, URL-encoded too; a short one only as a whole token', () => {
    expect(redact(`x${KEY}y and ${encodeURIComponent('a key/with+signs')}`, [KEY, 'a key/with+signs'])).toBe('x***y and ***');
    expect(redact('Invalid API key. (k) api_key=k&x=1', ['k'])).toBe('Invalid API key. (***) api_key=***&x=1');
  });

  it('redactDeep masks strings in arrays and plain objects, and returns the same value when nothing is masked', () => {
    const body = { detail: [{ loc: ['header', KEY], msg: `bad ${KEY}` }], n: 1 };
    expect(redactDeep(body, [KEY])).toEqual({ detail: [{ loc: ['header', '***'], msg: 'bad ***' }], n: 1 });
    const clean = { a: ['b'] };
    expect(redactDeep(clean, [KEY])).toBe(clean);
  });

  it('SvcError masks the secrets it is given in its message, detail, body and cause', () => {
    const secret = 'only-given-here-123456';
    const err = new ApiError('http_error', `echo ${secret}`, { detail: { text: secret }, body: [secret], cause: new Error(`low ${secret}`), secrets: [secret] });
    for (const text of shown(err)) expect(text).not.toContain(secret);
    expect((err.cause as Error).message).toBe('low ***');
  });
});

describe('servers that echo the key', () => {
  let servers: Loopback[] = [];
  const serve = async (h: Handler): Promise<Loopback> => {
    const l = await loopback(h);
    servers.push(l);
    return l;
  };
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });
  let wav: ReturnType<typeof tinyWav>;
  beforeAll(() => {
    wav = tinyWav();
  });
  afterAll(() => wav.remove());

  /** Echoes the key header it got, in the way `mode` says. */
  const echo =
    (mode: 'detail' | 'validation' | 'text' | 'contract'): Handler =>
    (req, res) => {
      const key = String(req.headers['x-api-key'] ?? req.headers['apikey'] ?? '');
      req.resume();
      req.on('end', () => {
        if (mode === 'detail') json(res, 401, { detail: `Invalid API key: ${key}`, key });
        else if (mode === 'validation') json(res, 422, { detail: [{ loc: ['header', key], msg: `value ${key} refused`, type: 'value_error' }] });
        else if (mode === 'text') res.writeHead(500, { 'content-type': 'text/plain' }).end(`proxy error for key=${key}`);
        else json(res, 200, { presets: `not a list: ${key}`, probs: key, job_id: 7, status: key });
      });
    };

  for (const mode of ['detail', 'validation', 'text', 'contract'] as const) {
    it(`batch call, presets and PlatformClient: a ${mode} echo is masked everywhere`, async () => {
      const s = await serve(echo(mode));
      const models = { baseUrl: s.origin, apiKey: KEY, retry: false as const };
      const client = new PlatformClient({ baseUrl: s.origin, accountUuid: 'acct', apiKey: PLATFORM_KEY, env: {} });
      expectMasked(await failure(detectAudioEventsAsync(wav.path, models)), KEY);
      expectMasked(await failure(listPresetsAsync(models)), KEY);
      expectMasked(await failure(client.getJob('j')), PLATFORM_KEY);
      expectMasked(await failure(client.submitRealtime()), PLATFORM_KEY);
      const multi = await failure(client.submitFiles([wav.path, wav.path]));
      expectMasked(multi, PLATFORM_KEY);
    });
  }

  it('a failed job whose status record echoes the platform key', async () => {
    const s = await serve((req, res) => json(res, 200, { job_id: 'j', status: 'failed', error: `bad key ${String(req.headers['apikey'])}` }));
    const client = new PlatformClient({ baseUrl: s.origin, accountUuid: 'acct', apiKey: PLATFORM_KEY, env: {} });
    // 'failed' is not in the contract: a caller opts into it as terminal (failedStates).
    expectMasked(await failure(lastValueFrom(client.pollJob('j', { failedStates: ['failed'] }))), PLATFORM_KEY);
  });

  it('the CLI prints no echoed key (svc-stream events, svc-stream presets)', async () => {
    const s = await serve(echo('detail'));
    const capture = (): Writable & { text: () => string } => {
      let text = '';
      const w = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb(); } });
      return Object.assign(w, { text: () => text });
    };
    for (const [name, args] of [
      ['events', ['--api-key', KEY, '--base-url', s.origin, wav.path]],
      ['presets', ['--api-key', KEY, '--base-url', s.origin]],
    ] as const) {
      const stdout = capture();
      const stderr = capture();
      const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env: {} };
      expect(await batchCommands.find((c) => c.name === name)!.run([...args], io)).toBe(1);
      const out = stdout.text() + stderr.text();
      expect(out).not.toContain(KEY);
      expect(out).toContain('invalid_api_key');
      expect(out).toContain('***');
    }
  });
});

describe('a streaming server that echoes the key', () => {
  let server: Server | undefined;
  let wss: WebSocketServer | undefined;
  afterEach(async () => {
    wss?.close();
    for (const c of wss?.clients ?? []) c.terminate();
    server?.closeAllConnections();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
    wss = undefined;
  });

  async function start(onUpgrade: 'refuse' | 'error-event'): Promise<string> {
    server = createServer();
    if (onUpgrade === 'refuse') {
      server.on('upgrade', (req, socket) => {
        const key = new URL(req.url ?? '/', 'http://x').searchParams.get('api_key');
        const body = JSON.stringify({ detail: `Invalid API key: ${key}` });
        socket.end(`HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
      });
    } else {
      wss = new WebSocketServer({ server });
      wss.on('connection', (ws, req) => {
        const key = new URL(req.url ?? '/', 'http://x').searchParams.get('api_key');
        ws.once('message', () => {
          ws.send(JSON.stringify({ type: 'error', error: `key ${key} is not valid` }));
          ws.close(4001, `bad key ${key}`);
        });
      });
    }
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const events$ = (baseUrl: string): Observable<ServerEvent> =>
    withAudioMeta(from([new Uint8Array(1600)]), { format: { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 } }).pipe(analyzeConversation({ baseUrl, apiKey: KEY }));

  function session(baseUrl: string): Promise<{ events: ServerEvent[]; error: unknown }> {
    const events: ServerEvent[] = [];
    const run$ = events$(baseUrl);
    return new Promise((resolve) => run$.subscribe({ next: (e) => events.push(e), error: (error: unknown) => resolve({ events, error }), complete: () => resolve({ events, error: undefined }) }));
  }

  it('a refused handshake whose body echoes the key', async () => {
    const { error } = await session(await start('refuse'));
    expect(error).toBeInstanceOf(SessionError);
    expect((error as SessionError).code).toBe('invalid_api_key');
    expectMasked(error, KEY);
  });

  it('an error event and a close reason that echo the key: masked in the error and in the emitted event', async () => {
    const { events, error } = await session(await start('error-event'));
    expect((error as SessionError).code).toBe('invalid_api_key');
    expectMasked(error, KEY);
    expect(events.map((e) => e.type)).toEqual(['error']);
    expect(JSON.stringify(events)).not.toContain(KEY);
  });

  it("the dashboard's page, /state and final view show no echoed key", async () => {
    const dashboard = await startDashboard({ events$: events$(await start('error-event')), start: 'now' });
    try {
      const final = await dashboard.session.ended;
      expect(final.status).toBe('failed');
      expect(final.server_error).toContain('***');
      const state = await (await fetch(new URL('/state', dashboard.url))).text();
      const page = await (await fetch(dashboard.url)).text();
      for (const text of [JSON.stringify(final), state, page]) expect(text).not.toContain(KEY);
    } finally {
      await dashboard.close();
    }
  });
});
