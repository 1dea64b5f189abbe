// Tolerant where the real service may vary (issue 19): one odd value inside a well-formed
// event never loses the session. Real sessions against the emulator, scripted frame by frame.
// (Sessions here run with `reconnect: false`: each test is about one session; reconnecting has its own, test/session/reconnect.test.ts.)
import { afterEach, describe, expect, it } from 'vitest';
import { from, lastValueFrom, Observable, scan } from 'rxjs';
import { analyzeConversation, createSessionStats, type EventWarning, type ServerEvent, type SvcError } from 'svc-stream';
import { initialConversationSnapshot, snapshotReducer } from 'svc-stream/state';
import { startEmulator, type RunningEmulator, type ScenarioInput } from 'svc-stream/emulator';

const KEY = 'sk-test-tolerance-secret';
const RAW = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } as const;

let emulators: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.map((e) => e.close()));
  emulators = [];
});

async function emulator(scenario: ScenarioInput): Promise<RunningEmulator> {
  const emu = await startEmulator({ apiKey: KEY, scenario });
  emulators.push(emu);
  return emu;
}

/** 300 ms of s16le silence. */
const audio = (): Observable<Uint8Array> => from([new Uint8Array(3200), new Uint8Array(3200), new Uint8Array(3200)]);

const CLIP = { clip_uuid: 'c1', text: 'hello', start_ms: 0, duration_ms: 500, speaker_label: '1', language: 'en', emotion: null, accent: null, deepfake_score: null };
const ROLE = { speaker_label: '1', participant_role_uuid: 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa', name: 'Agent', confidence: 0.9, selection_source: 'inferred', detail: null, reasoning: null };

async function run(scenario: ScenarioInput, options: { strict?: boolean } = {}) {
  const emu = await emulator(scenario);
  const stats = createSessionStats();
  const warnings: EventWarning[] = [];
  const events: ServerEvent[] = [];
  let error: SvcError | undefined;
  await new Promise<void>((resolve) => {
    audio()
      .pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, stats, onWarning: (w) => warnings.push(w), ...options }))
      .subscribe({ next: (e) => events.push(e), error: (e: unknown) => ((error = e as SvcError), resolve()), complete: resolve });
  });
  return { events, warnings, stats, error };
}

describe('a session keeps going past out-of-contract values (the default)', () => {
  it('a clip with speaker_label null is delivered with null, counted, and the session completes', async () => {
    const r = await run({ steps: [{ event: { type: 'clip', clip: { ...CLIP, speaker_label: null } } }, { event: { type: 'clip', clip: { ...CLIP, clip_uuid: 'c2' } } }] });
    expect(r.error).toBeUndefined();
    expect(r.events.map((e) => e.type)).toEqual(['clip', 'clip', 'done']);
    expect(r.events[0]).toEqual({ type: 'clip', clip: { ...CLIP, speaker_label: null } });
    expect(r.warnings).toEqual([
      {
        code: 'out_of_contract_value',
        eventType: 'clip',
        path: 'clip.speaker_label',
        reason: 'Invalid input: expected string, received null',
        action: 'label',
        message: 'clip event: clip.speaker_label: Invalid input: expected string, received null; delivered as a speaker label',
      },
    ]);
    expect(r.stats.warnings).toBe(1);
    expect(r.stats.lastWarning).toEqual(r.warnings[0]);
    // The derived state takes the null speaker as it is.
    const snapshot = r.events.reduce(snapshotReducer, initialConversationSnapshot);
    expect(snapshot.clips.clips.get('c1')?.speaker_label).toBeNull();
    expect(snapshot.clips.clips.size).toBe(2);
  });

  it('a participant_role pick with participant_role_uuid null leaves the speaker unassigned', async () => {
    const r = await run({
      steps: [
        { event: { type: 'participant_role', pick: ROLE } },
        { event: { type: 'participant_role', pick: { ...ROLE, speaker_label: '2' } } },
        { event: { type: 'participant_role', pick: { ...ROLE, participant_role_uuid: null, name: undefined } } },
      ],
    });
    expect(r.error).toBeUndefined();
    expect(r.events.map((e) => e.type)).toEqual(['participant_role', 'participant_role', 'participant_role', 'done']);
    expect(r.warnings.map((w) => [w.path, w.action])).toEqual([['pick.participant_role_uuid', 'null']]);
    const states = r.events.reduce<ReturnType<typeof snapshotReducer>[]>((acc, e) => [...acc, snapshotReducer(acc.at(-1) ?? initialConversationSnapshot, e)], []);
    expect([...states[1]!.conversation.roles.keys()]).toEqual(['1', '2']);
    expect([...states[2]!.conversation.roles.keys()]).toEqual(['2']);
  });

  it('a value with no clear meaning delivers its event as unknown with the reason; later events still arrive', async () => {
    const r = await run({
      steps: [
        { event: { type: 'topic_sentiment', topic_sentiment: { topic: 'refund', speaker_label: '1', sentiment_score: 3 } } },
        { event: { type: 'summary', text: 'Fine.' } },
      ],
    });
    expect(r.error).toBeUndefined();
    expect(r.events[0]).toEqual({
      type: 'unknown',
      event_type: 'topic_sentiment',
      data: { topic_sentiment: { topic: 'refund', speaker_label: '1', sentiment_score: 3 } },
      reason: 'topic_sentiment.sentiment_score: Too big: expected number to be <=1',
    });
    expect(r.events.slice(1)).toEqual([{ type: 'summary', text: 'Fine.' }, { type: 'done', duration_ms: 300 }]);
    expect(r.warnings.map((w) => [w.eventType, w.path, w.action])).toEqual([['topic_sentiment', 'topic_sentiment.sentiment_score', 'unknown']]);
    expect(r.stats.warnings).toBe(1);
  });

  it('a done whose duration breaks the contract still ends the session', async () => {
    const r = await run({ steps: [{ after_end: true, raw: '{"type":"done","duration_ms":-5}' }] });
    expect(r.error).toBeUndefined();
    expect(r.events).toEqual([{ type: 'unknown', event_type: 'done', data: { duration_ms: -5 }, reason: 'duration_ms: Too small: expected number to be >=0' }]);
    expect(r.stats.warnings).toBe(1);
  });

  it('an error event whose text is not a string is delivered with it made text', async () => {
    const r = await run({ steps: [{ raw: '{"type":"error","error":{"code":7}}' }] });
    expect(r.events[0]).toEqual({ type: 'error', error: '{"code":7}' });
    expect(r.warnings.map((w) => [w.path, w.action])).toEqual([['error', 'text']]);
  });

  it('invalid JSON stays fatal', async () => {
    const r = await run({ steps: [{ raw: '{"type":"clip",' }] });
    expect(r.error?.code).toBe('malformed_frame');
    expect(r.stats.warnings).toBe(0);
  });
});

describe('strict: true keeps the behaviour before tolerance', () => {
  it('a clip with speaker_label null fails the session with malformed_frame naming the field', async () => {
    const r = await run({ steps: [{ event: { type: 'clip', clip: { ...CLIP, speaker_label: null } } }] }, { strict: true });
    expect(r.error?.code).toBe('malformed_frame');
    expect(r.error?.message).toContain('clip.speaker_label');
    expect(r.events).toEqual([]);
    expect(r.warnings).toEqual([]);
  });

  it('a role pick with participant_role_uuid null fails it too', async () => {
    const r = await run({ steps: [{ event: { type: 'participant_role', pick: { ...ROLE, participant_role_uuid: null } } }] }, { strict: true });
    expect(r.error?.code).toBe('malformed_frame');
    expect(r.error?.message).toContain('pick.participant_role_uuid');
  });
});

describe('each subscription counts its own warnings', () => {
  it('without a stats object, onWarning still sees every warning', async () => {
    const emu = await emulator({ steps: [{ event: { type: 'clip', clip: { ...CLIP, speaker_label: null } } }] });
    const seen: string[] = [];
    const session$ = audio().pipe(analyzeConversation({ reconnect: false, apiKey: KEY, baseUrl: emu.baseUrl, format: RAW, onWarning: (w) => seen.push(w.path) }));
    const last = await lastValueFrom(session$.pipe(scan((n) => n + 1, 0)));
    expect(last).toBe(2);
    await lastValueFrom(session$);
    expect(seen).toEqual(['clip.speaker_label', 'clip.speaker_label']);
  });
});

describe('docs/tolerance.md', () => {
  it('lists every field of EVENT_TOLERANCE with its action', async () => {
    const { readFileSync } = await import('node:fs');
    const { EVENT_TOLERANCE } = await import('svc-stream/schema');
    const doc = readFileSync(new URL('../../docs/tolerance.md', import.meta.url), 'utf8');
    for (const [type, fields] of Object.entries(EVENT_TOLERANCE)) {
      for (const [field, action] of Object.entries(fields)) expect(doc, `${type}.${field}`).toContain(`| \`${type}\` | \`${field}\` | ${action} |`);
    }
    // And every row marked unknown is a field the table leaves out.
    for (const m of doc.matchAll(/^\| `(\w+)` \| `(\w+)` \| unknown \|/gm)) {
      expect((EVENT_TOLERANCE as Record<string, Record<string, string>>)[m[1]!]![m[2]!], `${m[1]}.${m[2]}`).toBeUndefined();
    }
  });
});
