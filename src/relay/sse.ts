// Server-sent events on the relay's wire, both ends: the framing the relay writes and an
// incremental parser (the HTML spec's rules) for clients that read the stream with fetch.
// Browser-safe: no Node built-in.

/** One server-sent message as the relay writes it, or as {@link SseParser} reads it. */
export interface SseMessage {
  /** The `event:` field; `message` when absent. */
  readonly event: string;
  /** The `data:` lines joined with `\n`. */
  readonly data: string;
  /** The `id:` field of this message, if it had one. */
  readonly id?: string | undefined;
}

/**
 * One SSE message: `id:` (when given), `event:`, then `data:` (JSON.stringify never emits a raw
 * newline, so one data line holds it), then the blank line that ends the message.
 */
export function sseMessage(event: string, data: unknown, id?: number): string {
  return `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Reads a text/event-stream incrementally: `push(chunk)` returns the messages the chunk
 * completed. Lines end in `\r\n`, `\n` or `\r`; comments (`:`) are skipped; a message with no
 * `data:` line dispatches nothing, as in EventSource. `maxLineChars` bounds a line that never
 * ends (a broken or hostile server): `push` throws past it.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  /** The last `retry:` field seen (the reconnection delay in ms the server asked for); it applies at once, with or without data. */
  retry: number | undefined;
  private sawCr = false;

  constructor(private readonly maxLineChars = 1 << 20) {}

  push(chunk: string): SseMessage[] {
    const out: SseMessage[] = [];
    let text = this.buffer + chunk;
    if (this.sawCr && text.startsWith('\n')) text = text.slice(1);
    this.sawCr = false;
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(text.slice(start, i), out);
      if (c === 13) {
        if (i + 1 === text.length) this.sawCr = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.buffer = text.slice(start);
    if (this.buffer.length > this.maxLineChars) throw new RangeError(`an event-stream line is longer than ${this.maxLineChars} characters`);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      this.event = '';
      this.data = [];
      this.id = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }
}
