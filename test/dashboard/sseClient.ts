// A small SSE client over node:http for the dashboard tests: collects messages (JSON data) as they come.
import { get, type IncomingMessage } from 'node:http';
import { SseParser } from '../../src/relay/sse.js';

export interface SseMessage {
  readonly event: string;
  readonly data: any;
  readonly id?: string | undefined;
}

export interface SseConnection {
  readonly messages: SseMessage[];
  /** Bytes received so far. */
  bytes(): number;
  /** Resolves when the server ended the stream. */
  readonly closed: Promise<void>;
  /** Resolves with the messages once `predicate` holds (rejects after `timeoutMs`). */
  waitFor(predicate: (messages: SseMessage[]) => boolean, timeoutMs?: number): Promise<SseMessage[]>;
  close(): void;
}

export function connectSse(url: string): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = get(url, (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
      const messages: SseMessage[] = [];
      const waiters = new Set<() => void>();
      const parser = new SseParser();
      let bytes = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        bytes += Buffer.byteLength(chunk);
        for (const m of parser.push(chunk)) messages.push({ event: m.event, data: JSON.parse(m.data), id: m.id });
        for (const w of waiters) w();
      });
      const closed = new Promise<void>((done) => res.on('close', () => done()));
      resolve({
        messages,
        bytes: () => bytes,
        closed,
        waitFor(predicate, timeoutMs = 5000) {
          return new Promise((ok, fail) => {
            const check = (): void => {
              if (!predicate(messages)) return;
              waiters.delete(check);
              clearTimeout(timer);
              ok(messages);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`timed out; got ${messages.map((m) => m.event).join(', ')}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}
