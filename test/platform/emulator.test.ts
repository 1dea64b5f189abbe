// The emulator's orchestration routes on the wire: auth, the three patterns, timed states,
// limits and faults, asserted with plain fetch.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { harness, manualClock, type Harness } from './helpers.js';

const WAV = readFileSync(new URL('../../samples/call.wav', import.meta.url));

let h: Harness | undefined;
afterEach(async () => {
  await h?.emu.close();
  h = undefined;
});

function headers(x: Harness): Record<string, string> {
  return { 'content-type': 'application/json', accountuuid: x.emu.accountUuid, apikey: x.emu.platformApiKey };
}
async function post(x: Harness, body: unknown, hdrs = headers(x)): Promise<{ status: number; json: any }> {
  const r = await fetch(`${x.emu.platformUrl}/api_service`, { method: 'POST', headers: hdrs, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}
async function get(x: Harness, jobId: string, hdrs = headers(x)): Promise<{ status: number; json: any }> {
  const r = await fetch(`${x.emu.platformUrl}/api_service/job_status/${encodeURIComponent(jobId)}`, { headers: hdrs });
  return { status: r.status, json: await r.json() };
}
const file = (name = 'call.wav') => ({ audio_base64: WAV.toString('base64'), file_extension: 'wav', filename: name });

describe('emulator orchestration routes', () => {
  it('refuses missing or wrong accountuuid/apikey with 401 and a detail', async () => {
    h = await harness();
    const none = await post(h, file(), { 'content-type': 'application/json' });
    expect(none.status).toBe(401);
    expect(typeof none.json.detail).toBe('string');
    const wrong = await get(h, 'x', { accountuuid: h.emu.accountUuid, apikey: 'not-the-key' });
    expect(wrong.status).toBe(401);
    expect(JSON.stringify(wrong.json)).not.toContain('not-the-key');
  });

  it('moves a single-file job queued → processing → completed with the real duration and flag outputs', async () => {
    const clock = manualClock();
    h = await harness({ queuedMs: 40, processingMs: 80, now: clock.now });
    const sub = await post(h, { ...file(), flags: { emotion_annotation: true, demographics: true } });
    expect(sub.status).toBe(200);
    expect(sub.json).toMatchObject({ job_id: expect.any(String), status: 'queued', api_calls_charged: 1 });
    expect(typeof sub.json.estimated_processing_time).toBe('number');
    const seen: string[] = [];
    for (const step of [0, 39, 1, 79, 1]) {
      clock.advance(step);
      seen.push((await get(h, sub.json.job_id)).json.status);
    }
    expect(seen).toEqual(['queued', 'queued', 'processing', 'processing', 'completed']);
    const last = (await get(h, sub.json.job_id)).json;
    const [r] = last.results.files;
    expect(r.duration_ms).toBeGreaterThan(38_000);
    expect(r.duration_ms).toBeLessThan(39_000);
    expect(r.emotion_annotation.time_series).toHaveLength(2);
    expect(r.demographics.speakers[0].speech_ms).toBeGreaterThan(0);
  });

  it('builds a multi-file job from one POST per file and finalizes on finalize_job: true', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0 });
    const first = await post(h, { ...file('a.wav'), finalize_job: false });
    expect(first.json.status).toBe('uploading');
    const id = first.json.job_id;
    expect((await get(h, id)).json.status).toBe('uploading');
    const second = await post(h, { ...file('b.wav'), job_id: id, finalize_job: true });
    expect(second.json).toMatchObject({ job_id: id, files_received: 2 });
    const done = (await get(h, id)).json;
    expect(done.status).toBe('completed');
    expect(done.results.files.map((f: any) => f.filename)).toEqual(['a.wav', 'b.wav']);
    const late = await post(h, { ...file('c.wav'), job_id: id });
    expect(late.status).toBe(409);
    expect((await post(h, { ...file(), job_id: 'no-such-job' })).status).toBe(404);
  });

  it('answers a real-time submission with a ws realtime_url on itself that carries no key', async () => {
    h = await harness();
    const r = await post(h, { submission_type: 'realtime_websocket' });
    expect(r.status).toBe(200);
    expect(r.json.realtime_url).toBe(`${h.emu.baseUrl.replace('http', 'ws')}/api/svc-2-streaming`);
    expect(r.json.realtime_url).not.toContain(h.emu.platformApiKey);
    expect((await post(h, { submission_type: 'realtime_websocket', ...file() })).status).toBe(400);
  });

  it('refuses a single file above 5 MB with 413, an undecodable file with 400, a bad body with 400/422', async () => {
    h = await harness();
    const big = await post(h, { audio_base64: Buffer.alloc(6_000_000).toString('base64'), file_extension: 'wav', filename: 'big.wav' });
    expect(big.status).toBe(413);
    expect(big.json.detail).toMatch(/limit/);
    const junk = await post(h, { audio_base64: Buffer.from('not audio at all').toString('base64'), file_extension: 'wav', filename: 'junk.wav' });
    expect(junk.status).toBe(400);
    expect(junk.json.detail).toMatch(/could not be processed/);
    const missing = await post(h, { file_extension: 'wav' });
    expect(missing.status).toBe(422);
    expect(missing.json.detail[0].loc).toEqual(['body', 'audio_base64']);
    const r = await fetch(`${h.emu.platformUrl}/api_service`, { method: 'POST', headers: headers(h), body: '{not json' });
    expect(r.status).toBe(400);
  });

  it('answers 404 with a detail for an unknown job, and scripted 503s and failures', async () => {
    h = await harness({ queuedMs: 0, processingMs: 0, outcome: 'failed', transientPolls: [1] });
    const unknown = await get(h, 'nope');
    expect(unknown).toEqual({ status: 404, json: { detail: 'Job not found.' } });
    const { json } = await post(h, file());
    expect((await get(h, json.job_id)).status).toBe(503);
    const failed = await get(h, json.job_id);
    expect(failed.json).toMatchObject({ status: 'failed', error: expect.any(String) });
    expect(failed.json.results).toBeUndefined();
  });
});
