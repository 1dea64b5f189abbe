// A stand-in for the service when a test runs more sessions at once than the emulator takes (its
// concurrency tops out at 25, §8): every session accepted, its audio counted, `done` with the
// duration of the audio it got when the client ends it.
import { WebSocketServer } from 'ws';

export async function startStandIn(): Promise<{ baseUrl: string; sessions: number; close(): Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 1 << 20 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const state = { sessions: 0 };
  wss.on('connection', (ws, req) => {
    state.sessions++;
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const bytesPerMs = ((Number(q.get('sample_rate')) || 8000) * (Number(q.get('num_channels')) || 1) * (/^s16/.test(q.get('audio_format') ?? '') ? 2 : 1)) / 1000;
    let bytes = 0;
    let config = false;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return void (bytes += (data as Buffer).length);
      if (!config) return void (config = true);
      if ((data as Buffer).length === 0) {
        ws.send(JSON.stringify({ type: 'done', duration_ms: Math.round(bytes / bytesPerMs) }));
        ws.close(1000);
      }
    });
  });
  const port = (wss.address() as { port: number }).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    get sessions() {
      return state.sessions;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };
}
