// Hostile peers against the emulator: every refusal is decided before the body or the frame is
// read, bytes read and memory stay bounded, and every WebSocket close other than 1000 follows an
// `error` event. Real sockets on loopback; the raw ones are where `ws` or curl would be too polite.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { emulatorOptionsFromConfig, STREAMING_ERRORS, type RunningEmulator } from 'svc-stream/emulator';
import { connectionsEnded, ofType, runSession, sample, wavBody, withEmulator, wsUrl, type SessionResult } from './helpers.js';

const AE = '/api/svc-2-audio-event-classifier';
const PATH = '/api/svc-2-streaming';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };
const SHORT = wavBody(sample('call.wav')).subarray(0, 2 * 32000);
const MiB = 1024 * 1024;
/** What a refused client may push before the emulator stops reading: kernel buffers plus the linger. */
const READ_BOUND = 32 * MiB;

// The emulator runs in this process: a private TMPDIR shows every temp file it writes.
const privateTmp = mkdtempSync(join(tmpdir(), 'svc-emu-limits-tmp-'));
const savedTmp = process.env['TMPDIR'];
beforeAll(() => {
  process.env['TMPDIR'] = privateTmp;
});
afterAll(() => {
  if (savedTmp === undefined) delete process.env['TMPDIR'];
  else process.env['TMPDIR'] = savedTmp;
  rmSync(privateTmp, { recursive: true, force: true });
});

const waitFor = async (cond: () => boolean, ms = 5_000): Promise<void> => {
  await expect.poll(cond, { timeout: ms, interval: 10 }).toBe(true);
};

function expectErrorThenClose(r: SessionResult, code: number, error: string): void {
  expect(r.closeCode).toBe(code);
  const last = r.frames.at(-1);
  expect(last?.type).toBe('error');
  expect(last?.['error']).toBe(error);
}

// ---------------------------------------------------------------------------------------------
// HTTP: a client that keeps writing a huge body whatever the server says.

interface PushResult {
  readonly status: number | undefined;
  readonly body: string;
  /** Body bytes the client had written when the response arrived. */
  readonly writtenAtResponse: number | undefined;
  /** Body bytes accepted by the socket before it ended. */
  readonly written: number;
}

/**
 * POST `total` bytes produced by `piece(i)` (lazily, so the test holds no large buffer), never
 * stopping on its own before the server answers and the connection ends.
 */
function push(url: string, headers: Record<string, string>, total: number, piece: (offset: number) => Buffer): Promise<PushResult> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(total) } });
    let written = 0;
    let writtenAtResponse: number | undefined;
    let status: number | undefined;
    let body = '';
    let stopped = false;
    const timer = setTimeout(() => req.destroy(), 20_000);
    const finish = (): void => {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      resolve({ status, body, writtenAtResponse, written });
    };
    req.on('response', (res: IncomingMessage) => {
      status = res.statusCode;
      writtenAtResponse = written;
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('error', () => undefined);
    });
    req.on('error', () => finish());
    req.on('close', () => finish());
    const pump = (): void => {
      while (!stopped && written < total) {
        const p = piece(written);
        written += p.length;
        if (!req.write(p)) return void req.once('drain', pump);
      }
      if (!stopped) req.end();
    };
    pump();
  });
}

/** A multipart body of `count` text fields of `size` bytes each, then `upload_file`. */
function manyFields(boundary: string, count: number, size: number): { total: number; piece: (offset: number) => Buffer } {
  const filler = Buffer.alloc(64 * 1024, 0x61);
  const head = (i: number): Buffer => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\n`);
  const headLen = head(0).length + 8; // names grow up to 4 digits
  const partLen = headLen + size + 2;
  const total = partLen * count;
  // Each part is padded to `partLen` with field bytes so offsets are easy to compute.
  return {
    total,
    piece: (offset) => {
      const i = Math.floor(offset / partLen);
      const at = offset % partLen;
      if (at === 0) {
        const h = head(i);
        return Buffer.concat([h, Buffer.alloc(headLen - h.length, 0x61)]);
      }
      const left = partLen - 2 - at;
      if (left <= 0) return Buffer.from('\r\n').subarray(-left);
      return filler.subarray(0, Math.min(filler.length, left));
    },
  };
}

function curl(args: readonly string[]): Promise<{ status: number; uploaded: number; body: string }> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-sS', '-w', '\n%{http_code} %{size_upload}', ...args], { timeout: 15_000, maxBuffer: 1 << 20 }, (err, stdout) => {
      if (err) return reject(err);
      const i = stdout.lastIndexOf('\n');
      const [status, uploaded] = stdout.slice(i + 1).split(' ').map(Number);
      resolve({ status: status!, uploaded: uploaded!, body: stdout.slice(0, i) });
    });
  });
}

const uploadDirs = (): string[] => readdirSync(privateTmp).filter((n) => n.startsWith('svc-emulator-upload-'));

describe('batch endpoints authenticate before reading the body', () => {
  const BOUNDARY = 'hostile-boundary';
  const form = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

  it('no key and 400 fields of 1 MiB: 422 naming the header, the body not read, nothing written to disk', async () => {
    await withEmulator({}, async (emu) => {
      const { total, piece } = manyFields(BOUNDARY, 400, MiB);
      const r = await push(`${emu.baseUrl}${AE}`, form, total, piece);
      expect(r.status).toBe(422);
      expect(JSON.parse(r.body)).toEqual({ detail: [{ loc: ['header', 'x-api-key'], msg: 'Field required', type: 'missing', input: null }] });
      expect(r.writtenAtResponse!).toBeLessThan(READ_BOUND);
      expect(r.written).toBeLessThan(READ_BOUND);
      expect(uploadDirs()).toEqual([]);
    });
  }, 30_000);

  it('an unknown key and a 500 MB file part: 401 before the upload, nothing spooled', async () => {
    await withEmulator({}, async (emu) => {
      const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="upload_file"; filename="big.wav"\r\n\r\n`);
      const zeros = Buffer.alloc(256 * 1024);
      const r = await push(`${emu.baseUrl}${AE}`, { ...form, 'x-api-key': 'not-a-key' }, 500 * MiB, (o) => (o === 0 ? head : zeros));
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body)).toEqual({ detail: 'Invalid API key.' });
      expect(r.written).toBeLessThan(READ_BOUND);
      expect(uploadDirs()).toEqual([]);
    });
  }, 30_000);

  it('a valid key but 400 fields of 1 MiB: 400 Invalid request. once the caps are passed, the rest not read', async () => {
    await withEmulator({}, async (emu) => {
      const { total, piece } = manyFields(BOUNDARY, 400, MiB);
      const r = await push(`${emu.baseUrl}${AE}`, { ...form, 'x-api-key': emu.apiKey }, total, piece);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ detail: 'Invalid request.' });
      expect(r.written).toBeLessThan(READ_BOUND);
      expect(uploadDirs()).toEqual([]);
    });
  }, 30_000);

  it('too many parts: 400 at the 33rd part, with the default caps', async () => {
    await withEmulator({}, async (emu) => {
      const { total, piece } = manyFields(BOUNDARY, 1_000_000, 10);
      const r = await push(`${emu.baseUrl}${AE}`, { ...form, 'x-api-key': emu.apiKey }, total, piece);
      expect(r.status).toBe(400);
      expect(r.written).toBeLessThan(READ_BOUND);
    });
  }, 30_000);

  it('curl with Expect: 100-continue and a bad key uploads nothing at all; a good key uploads and is answered', async () => {
    await withEmulator({}, async (emu) => {
      const bad = await curl(['-H', 'X-API-Key: nope', '-F', 'upload_file=@samples/call.wav', `${emu.baseUrl}${AE}`]);
      expect(bad.status).toBe(401);
      expect(bad.uploaded).toBe(0);
      const none = await curl(['-F', 'upload_file=@samples/call.wav', `${emu.baseUrl}${AE}`]);
      expect(none.status).toBe(422);
      expect(none.uploaded).toBe(0);
      const good = await curl(['-H', `X-API-Key: ${emu.apiKey}`, '-F', 'upload_file=@samples/call.wav', `${emu.baseUrl}${AE}`]);
      expect(good.status).toBe(200);
      expect(good.uploaded).toBeGreaterThan(1_000_000);
    });
  }, 30_000);

  it('curl -F file=@call.wav (the audio part misnamed) gets the contract\'s 422 naming upload_file, not 400', async () => {
    await withEmulator({}, async (emu) => {
      const r = await curl(['-H', `X-API-Key: ${emu.apiKey}`, '-F', 'file=@samples/call.wav', `${emu.baseUrl}${AE}`]);
      expect(r.status).toBe(422);
      expect(JSON.parse(r.body)).toEqual({ detail: [{ loc: ['body', 'upload_file'], msg: 'Field required', type: 'missing', input: null }] });
      // The whole part was read (and dropped): 1.2 MB, more than the 1 MiB the text fields may hold.
      expect(r.uploaded).toBeGreaterThan(1_200_000);
      await waitFor(() => uploadDirs().length === 0);
    });
  }, 30_000);

  it('file parts nobody reads are bounded together by the upload limit, never buffered', async () => {
    await withEmulator({}, async (emu) => {
      const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\n\r\n`);
      const total = 101 * 1_000_000 + head.length;
      const r = await push(`${emu.baseUrl}${AE}`, { ...form, 'x-api-key': emu.apiKey }, total, (o) => (o === 0 ? head : Buffer.alloc(256 * 1024, 1)));
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body)).toEqual({ detail: 'Invalid request.' });
      expect(uploadDirs()).toEqual([]);
    });
  }, 60_000);

  it('a second file part and a second upload_file are counted, never written: one temp file', async () => {
    await withEmulator({ limits: { maxFormFieldBytes: 8 * MiB } }, async (emu) => {
      const wav = sample('call.wav').subarray(0, 44 + 32000);
      wav.writeUInt32LE(32000, 40);
      wav.writeUInt32LE(36 + 32000, 4);
      const part = (name: string, filename: string, data: Buffer): Buffer =>
        Buffer.concat([Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n\r\n`), data, Buffer.from('\r\n')]);
      const body = Buffer.concat([
        part('extra', 'extra.bin', Buffer.alloc(4 * MiB, 1)),
        part('upload_file', 'a.wav', wav),
        part('upload_file', 'b.wav', Buffer.alloc(MiB, 2)),
        Buffer.from(`--${BOUNDARY}--\r\n`),
      ]);
      // Watch the temp folder while the request runs.
      let most = 0;
      const watch = setInterval(() => {
        for (const d of uploadDirs()) {
          try {
            most = Math.max(most, readdirSync(join(privateTmp, d)).length);
          } catch {
            // removed meanwhile
          }
        }
      }, 1);
      const r = await push(`${emu.baseUrl}${AE}`, { ...form, 'x-api-key': emu.apiKey }, body.length, (o) => body.subarray(o, o + 64 * 1024));
      clearInterval(watch);
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ duration_ms: 1000 });
      expect(most).toBeLessThanOrEqual(1);
      // The temp file goes right after the answer.
      await waitFor(() => uploadDirs().length === 0);
    });
  }, 30_000);

  it('the orchestration API checks both headers before the body, and refuses a body over its cap where it stands', async () => {
    await withEmulator({}, async (emu) => {
      const json = { 'content-type': 'application/json' };
      const anon = await push(`${emu.platformUrl}/api_service`, json, 400 * MiB, () => Buffer.alloc(256 * 1024, 0x20));
      expect(anon.status).toBe(401);
      expect(anon.written).toBeLessThan(READ_BOUND);
      const auth = { ...json, accountuuid: emu.accountUuid, apikey: emu.platformApiKey };
      const big = await push(`${emu.platformUrl}/api_service`, auth, 400 * MiB, () => Buffer.alloc(256 * 1024, 0x20));
      expect(big.status).toBe(413);
      expect(big.written).toBeLessThan(READ_BOUND);
    });
  }, 30_000);
});

// ---------------------------------------------------------------------------------------------
// WebSocket: a raw client, to send frame headers without their payload.

interface RawWs {
  readonly socket: Socket;
  /** Text frames received. */
  readonly texts: string[];
  /** The close frame's code, once received. */
  closeCode: number | undefined;
  /** Resolves when the server ends or drops the TCP connection. */
  readonly ended: Promise<void>;
}

async function rawWebSocket(url: string): Promise<RawWs> {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  socket.on('error', () => undefined);
  const ws: RawWs = {
    socket,
    texts: [],
    closeCode: undefined,
    ended: new Promise<void>((resolve) => socket.once('close', () => resolve())),
  };
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  let buf = Buffer.alloc(0);
  let upgraded = false;
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!buf.subarray(0, end).toString().startsWith('HTTP/1.1 101')) return reject(new Error(buf.toString()));
        upgraded = true;
        buf = buf.subarray(end + 4);
        resolve();
      }
      // Server frames are unmasked and small here.
      while (buf.length >= 2) {
        const opcode = buf[0]! & 0x0f;
        let len = buf[1]! & 0x7f;
        let at = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          at = 4;
        }
        if (buf.length < at + len) return;
        const payload = buf.subarray(at, at + len);
        if (opcode === 1) ws.texts.push(payload.toString('utf8'));
        if (opcode === 8) ws.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        buf = buf.subarray(at + len);
      }
    });
  });
  return ws;
}

/** A masked client frame header (mask key 0, so the payload goes as is). */
function frameHeader(opcode: number, length: number): Buffer {
  const h = Buffer.alloc(14);
  h[0] = 0x80 | opcode;
  h[1] = 0x80 | 127;
  h.writeBigUInt64BE(BigInt(length), 2);
  return h; // the last four bytes are the zero mask key
}

function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  return Buffer.concat([frameHeader(1, payload.length), payload]);
}

describe('refused and unconfigured WebSocket connections cost nothing', () => {
  it('a refused connection sending a 60 MB frame: error, 4001, and the frame is never buffered', async () => {
    await withEmulator({}, async (emu) => {
      // A plain ws client really sending it: the refusal still reads as 4001 after its error event.
      const big = Buffer.alloc(60 * MiB);
      const closed = await new Promise<{ code: number; texts: string[] }>((resolve) => {
        const client = new WebSocket(wsUrl(emu, PATH, RAW, 'not-a-key'));
        const texts: string[] = [];
        client.on('open', () => client.send(big));
        client.on('message', (d) => texts.push(String(d)));
        client.on('error', () => undefined);
        client.on('close', (code) => resolve({ code, texts }));
      });
      expect(closed.code).toBe(4001);
      expect(closed.texts.map((t) => JSON.parse(t))).toEqual([{ type: 'error', error: 'Invalid API key.' }]);

      // A raw one sending the header of a 60 MB frame, then the rest as fast as the socket
      // takes it: the emulator ends the connection on the header, so the socket closes before
      // the rest is through. (Order, not time: had it waited for the frame, loopback would
      // have carried all 60 MB long before its 2 s close grace ran out.)
      const raw = await rawWebSocket(wsUrl(emu, PATH, RAW, 'not-a-key'));
      await waitFor(() => raw.closeCode !== undefined);
      expect(raw.closeCode).toBe(4001);
      let ended = false;
      void raw.ended.then(() => (ended = true));
      let written = 64 * 1024;
      raw.socket.write(Buffer.concat([frameHeader(2, 60 * MiB), Buffer.alloc(written)]));
      const piece = Buffer.alloc(MiB);
      while (!ended && written < 60 * MiB) {
        const ok = await new Promise<boolean>((resolve) => raw.socket.write(piece, (err) => resolve(!err)));
        if (!ok) break;
        written += piece.length;
      }
      await raw.ended;
      expect(written).toBeLessThan(60 * MiB);
    });
  }, 30_000);

  it('an admitted connection: a frame header over its limit alone gets an error event and 1009, before the payload', async () => {
    await withEmulator({ limits: { maxMessageBytes: 4 * MiB } }, async (emu) => {
      const raw = await rawWebSocket(wsUrl(emu, PATH, RAW));
      raw.socket.write(frameHeader(2, 60 * MiB));
      await waitFor(() => raw.closeCode !== undefined);
      expect(raw.closeCode).toBe(1009);
      expect(raw.texts.map((t) => JSON.parse(t))).toEqual([{ type: 'error', error: STREAMING_ERRORS.messageTooLarge }]);
      raw.socket.destroy();
      await connectionsEnded(emu, 1);
      expect(emu.connections[0]).toMatchObject({ closeCode: 1009, status: 'closed' });
      expect(emu.accounts.find(emu.apiKey)!.inFlight['conversation']).toBe(0);
    });
  });

  it('a first message over the pre-config limit (binary): error event, then 1009', async () => {
    await withEmulator({ limits: { maxMessageBytesBeforeConfig: 4096 } }, async (emu) => {
      const raw = await rawWebSocket(wsUrl(emu, PATH, RAW));
      raw.socket.write(Buffer.concat([frameHeader(2, 8192), Buffer.alloc(8192)]));
      await waitFor(() => raw.closeCode !== undefined);
      expect(raw.closeCode).toBe(1009);
      expect(raw.texts.map((t) => JSON.parse(t))).toEqual([{ type: 'error', error: STREAMING_ERRORS.messageTooLarge }]);
      raw.socket.destroy();
      await connectionsEnded(emu, 1);
      expect(emu.accounts.find(emu.apiKey)!.inFlight['conversation']).toBe(0);
    });
  });

  it('a configured session takes messages over the pre-config limit (a 1 MiB+ audio frame)', async () => {
    await withEmulator({}, async (emu) => {
      const audio = Buffer.concat([SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT, SHORT]);
      expect(audio.length).toBeGreaterThan(MiB);
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio, chunkBytes: audio.length });
      expect(r.closeCode).toBe(1000);
      expect(ofType(r.frames, 'done')).toHaveLength(1);
    });
  });

  it('a config frame over the pre-config limit: error event, then 1009', async () => {
    await withEmulator({ limits: { maxMessageBytesBeforeConfig: 4096 } }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: JSON.stringify({ stt: { custom_terms: ['x'.repeat(5000)] } }) });
      expectErrorThenClose(r, 1009, STREAMING_ERRORS.messageTooLarge);
    });
  });
});

describe('an error event before every close other than 1000', () => {
  it('invalid UTF-8 in a text frame: error event, then 1007', async () => {
    await withEmulator({}, async (emu) => {
      const r = await new Promise<SessionResult>((resolve) => {
        const client = new WebSocket(wsUrl(emu, PATH, RAW));
        const frames: SessionResult['frames'] = [];
        client.on('open', () => client.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }));
        client.on('message', (d) => frames.push(JSON.parse(String(d))));
        client.on('error', () => undefined);
        client.on('close', (closeCode) => resolve({ frames, rawFrames: [], closeCode, opened: true }));
      });
      expectErrorThenClose(r, 1007, STREAMING_ERRORS.invalidUtf8);
    });
  });

  it('invalid UTF-8 while streaming (the end-of-audio frame is text): error event, then 1007', async () => {
    await withEmulator({}, async (emu) => {
      const raw = await rawWebSocket(wsUrl(emu, PATH, RAW));
      raw.socket.write(textFrame('default'));
      raw.socket.write(Buffer.concat([frameHeader(2, 3200), Buffer.alloc(3200)]));
      raw.socket.write(Buffer.concat([frameHeader(1, 2), Buffer.from([0xc3, 0x28])]));
      await waitFor(() => raw.closeCode !== undefined);
      expect(raw.closeCode).toBe(1007);
      expect(JSON.parse(raw.texts.at(-1)!)).toEqual({ type: 'error', error: STREAMING_ERRORS.invalidUtf8 });
      raw.socket.destroy();
    });
  });

  it('an audio frame over the configured limit: error event, then 1009, and the slot is free again', async () => {
    await withEmulator({ limits: { maxMessageBytes: 64 * 1024 }, organizations: [{ keys: ['k'], concurrency: 1 }], apiKey: 'k' }, async (emu) => {
      const audio = Buffer.concat([SHORT, SHORT]);
      const r = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio, chunkBytes: audio.length });
      expectErrorThenClose(r, 1009, STREAMING_ERRORS.messageTooLarge);
      await connectionsEnded(emu, 1);
      const ok = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT, chunkBytes: 32 * 1024 });
      expect(ok.closeCode).toBe(1000);
    });
  });

  it('an unmasked client frame (a protocol error): error event, then the close code ws gives it', async () => {
    await withEmulator({}, async (emu) => {
      const raw = await rawWebSocket(wsUrl(emu, PATH, RAW));
      raw.socket.write(Buffer.from([0x81, 0x07, ...Buffer.from('default')]));
      await waitFor(() => raw.closeCode !== undefined);
      expect(raw.closeCode).toBe(1002);
      expect(JSON.parse(raw.texts.at(-1)!)).toEqual({ type: 'error', error: STREAMING_ERRORS.invalidFrame });
      raw.socket.destroy();
    });
  });
});

describe('inactivity limit', () => {
  const opts = (ms: number) => ({ limits: { inactivityTimeoutMs: ms }, organizations: [{ keys: ['k'], concurrency: 1 }], apiKey: 'k' });

  /** Open, send the config and some audio, then go silent without ending the audio. */
  async function silentAfterAudio(emu: RunningEmulator): Promise<SessionResult> {
    return runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT.subarray(0, 6400), end: false, timeoutMs: 10_000 });
  }

  it('a session that never ends its audio: error event, 1003, and the organization can connect again', async () => {
    await withEmulator(opts(300), async (emu: RunningEmulator) => {
      const r = await silentAfterAudio(emu);
      expectErrorThenClose(r, 1003, STREAMING_ERRORS.inactive);
      await connectionsEnded(emu, 1);
      expect(emu.connections[0]).toMatchObject({ closeCode: 1003, bytesReceived: 6400 });
      const next = await runSession(wsUrl(emu, PATH, RAW), { config: 'default', audio: SHORT });
      expect(next.closeCode).toBe(1000);
    });
  });

  it('a connection that never sends its config frame is closed the same way', async () => {
    await withEmulator(opts(300), async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, RAW), { end: false, timeoutMs: 10_000 });
      expectErrorThenClose(r, 1003, STREAMING_ERRORS.inactive);
    });
  });

  it('a session that keeps sending is not closed, however long it lasts', async () => {
    await withEmulator(opts(1_000), async (emu) => {
      const r = await new Promise<SessionResult>((resolve) => {
        const client = new WebSocket(wsUrl(emu, PATH, RAW));
        const frames: SessionResult['frames'] = [];
        let sent = 0;
        let timer: NodeJS.Timeout | undefined;
        client.on('open', () => {
          client.send('default');
          timer = setInterval(() => {
            if (sent >= 12) {
              clearInterval(timer);
              return client.send('');
            }
            client.send(SHORT.subarray(sent * 3200, (sent + 1) * 3200));
            sent++;
          }, 100);
        });
        client.on('message', (d) => frames.push(JSON.parse(String(d))));
        client.on('error', () => undefined);
        client.on('close', (closeCode) => {
          clearInterval(timer);
          resolve({ frames, rawFrames: [], closeCode, opened: true });
        });
      });
      expect(r.closeCode).toBe(1000);
      expect(ofType(r.frames, 'error')).toEqual([]);
    });
  });

  it('0 turns the limit off; the config file takes the limits and refuses unknown ones', async () => {
    const options = await emulatorOptionsFromConfig({ limits: { inactivityTimeoutMs: 0, maxMessageBytes: 1024 } });
    expect(options.limits).toEqual({ inactivityTimeoutMs: 0, maxMessageBytes: 1024 });
    await expect(emulatorOptionsFromConfig({ limits: { idleMs: 5 } })).rejects.toThrow(/limits/);
    await expect(emulatorOptionsFromConfig({ limits: { maxFormParts: 0 } })).rejects.toThrow(/limits.maxFormParts/);
  });
});
