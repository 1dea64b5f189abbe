// POST a streamed body with real backpressure. fetch (undici, Node 20) holds a streamed
// request body in memory as it sends it (measured: ~2x a 100 MB upload retained, by
// bench/upload); node:http with `pipeline` reads the file only as fast as the socket drains.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Send `body` to `url` and resolve with the answer as a standard `Response` (its body read
 * whole: batch answers are small JSON). Rejects on a network failure; `signal` aborts both
 * the upload and the wait.
 */
export function streamingPost(url: URL, headers: Readonly<Record<string, string>>, body: AsyncIterable<Uint8Array>, signal: AbortSignal): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: 'POST', headers, signal });
    let responded = false;
    let failure: unknown;
    req.once('error', (err) => (failure ??= err));
    req.once('response', (res: IncomingMessage) => {
      responded = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('error', reject);
      res.once('end', () => {
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (Array.isArray(v)) for (const one of v) out.append(k, one);
          else if (v !== undefined) out.set(k, v);
        }
        const status = res.statusCode ?? 0;
        resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage ?? '', headers: out }));
      });
    });
    // The service may answer (401, 429, 413…) before it has read the whole upload and then
    // close: that answer wins over the broken pipe that follows it. Without an answer by the
    // time the request closes, the first failure is the outcome.
    req.once('close', () => {
      if (!responded) reject(failure ?? new Error('the connection closed before an answer'));
    });
    pipeline(Readable.from(body, { objectMode: false }), req).catch((err: unknown) => {
      failure ??= err;
      req.destroy();
    });
  });
}
