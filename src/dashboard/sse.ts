// Server-sent events framing: the only wire format between the dashboard and its page.

/**
 * One SSE message: `event: NAME`, then `data: JSON` (JSON.stringify never emits a raw
 * newline, so one data line always holds it), then the blank line that ends the message.
 */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Parse a stream of SSE text into messages; for tests and small clients. Returns what is left over. */
export function parseSse(text: string): { readonly messages: { event: string; data: string }[]; readonly rest: string } {
  const messages: { event: string; data: string }[] = [];
  const blocks = text.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) messages.push({ event, data: data.join('\n') });
  }
  return { messages, rest };
}
