// A raw event-stream reader over node:http for the relay tests: a client we did not write on
// the relay's side (headers as given), collecting parsed messages as they come.
import { request, type IncomingMessage } from 'node:http';
import { SseParser, type SseMessage } from '../../src/relay/sse.js';

export interface SseReader {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly messages: SseMessage[];
  readonly closed: Promise<void>;
  readonly response: IncomingMessage;
  waitFor(predicate: (messages: SseMessage[]) => boolean, timeoutMs?: number): Promise<SseMessage[]>;
  close(): void;
}

/** GET `url` with `headers`; resolves once the status is known (the body keeps coming in). */
export function openSse(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const messages: SseMessage[] = [];
      const waiters = new Set<() => void>();
      const parser = new SseParser();
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk.length < 4096 ? chunk : '';
        messages.push(...parser.push(chunk));
        for (const w of waiters) w();
      });
      res.on('error', () => undefined);
      const closed = new Promise<void>((done) => res.on('close', () => done()));
      void closed.then(() => {
        for (const w of waiters) w();
      });
      let ended = false;
      void closed.then(() => (ended = true));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        get body() {
          return body;
        },
        messages,
        closed,
        response: res,
        waitFor(predicate, timeoutMs = 5000) {
          return new Promise((ok, fail) => {
            const check = (): void => {
              if (predicate(messages)) {
                waiters.delete(check);
                clearTimeout(timer);
                ok(messages);
              } else if (ended) {
                waiters.delete(check);
                clearTimeout(timer);
                fail(new Error(`the stream closed; got ${messages.map((m) => m.event).join(', ')}`));
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`timed out; got ${messages.map((m) => `${m.event}${m.id ? `#${m.id}` : ''}`).join(', ')}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The ids of the `event` messages. */
export const eventIds = (messages: readonly SseMessage[]): number[] => messages.filter((m) => m.event === 'event').map((m) => Number(m.id));
