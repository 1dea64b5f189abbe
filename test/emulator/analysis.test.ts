// The analysis engine against the sample call: clips found in the signal where the measured
// transcript says the turns are, growing partials, true durations in every form, and the
// scenario's orderings; with a plain ws client and with analyzeConversation.
import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { analyzeConversation, type ServerEvent } from 'svc-stream';
import { ServerEventSchema } from 'svc-stream/schema';
import { withAudioMeta } from '../../src/audio/meta.js';
import { BUILTIN_DEFAULT_CONVERSATION_TYPE } from '../../src/emulator/catalog.js';
import { clipRefs, resolveRolePick, resolveTypePick, substitute, TimelineFieldError } from '../../src/emulator/timeline.js';
import {
  ALL_PRESETS_CONFIG,
  CALL_SCENARIO,
  ofType,
  runSession,
  sample,
  TRANSCRIPT,
  wavBody,
  wireProblems,
  withEmulator,
  wsUrl,
  type Frame,
} from './helpers.js';

const PATH = '/api/svc-2-streaming';
const RAW16 = { audio_format: 's16le', sample_rate: 16000, num_channels: 1 };
const clipsOf = (frames: Frame[]) => ofType(frames, 'clip').map((f) => f['clip'] as Record<string, any>);

function expectClipsMatchTranscript(frames: Frame[], tolerance = 150): void {
  const clips = clipsOf(frames);
  expect(clips).toHaveLength(TRANSCRIPT.length);
  clips.forEach((c, i) => {
    const t = TRANSCRIPT[i]!;
    expect(Math.abs(c.start_ms - t.start_ms), `clip ${i} start`).toBeLessThanOrEqual(tolerance);
    expect(Math.abs(c.start_ms + c.duration_ms - t.end_ms), `clip ${i} end`).toBeLessThanOrEqual(tolerance);
  });
}

describe('clips from the signal', () => {
  it('finds the ten turns of call.wav within 150 ms, with empty text and speaker "1" and no scenario', async () => {
    await withEmulator({}, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH), { config: 'default', audio: sample('call.wav') });
      expectClipsMatchTranscript(r.frames);
      for (const c of clipsOf(r.frames)) {
        expect(c.text).toBe('');
        expect(c.speaker_label).toBe('1');
        expect([c.emotion, c.accent, c.deepfake_score]).toEqual([null, null, null]);
      }
      expect(r.frames.at(-1)).toEqual({ type: 'done', duration_ms: 38507 });
      expect(r.frames.flatMap(wireProblems)).toEqual([]);
    });
  });

  it('alternates mono speakers from speaker 1, and each clip\'s partials agree with it (mono_speakers: alternate)', async () => {
    await withEmulator({ scenario: { mono_speakers: 'alternate' } as never }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH), { config: 'default', audio: sample('call.wav') });
      const clips = clipsOf(r.frames);
      expect(clips.map((c) => c.speaker_label)).toEqual(clips.map((_, i) => String((i % 2) + 1)));
      const finalOf = new Map(clips.map((c) => [c.clip_uuid, c.speaker_label]));
      const partials = ofType(r.frames, 'partial_clip').map((f) => f['partial_clip'] as Record<string, any>).filter((p) => p.speaker_label !== null);
      expect(partials.length).toBeGreaterThan(clips.length);
      for (const p of partials) expect(p.speaker_label, `partial of ${p.clip_uuid}`).toBe(finalOf.get(p.clip_uuid));
    });
  });

  it('sends growing partials with the clip UUID before each clip, and none after it', async () => {
    await withEmulator({ scenario: CALL_SCENARIO as never }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH), { config: 'default', audio: sample('call.wav') });
      const clips = clipsOf(r.frames);
      for (const clip of clips) {
        const idx = r.frames.findIndex((f) => f.type === 'clip' && (f['clip'] as any).clip_uuid === clip.clip_uuid);
        const partials = r.frames
          .map((f, i) => [f, i] as const)
          .filter(([f]) => f.type === 'partial_clip' && (f['partial_clip'] as any).clip_uuid === clip.clip_uuid);
        expect(partials.length, `partials of ${clip.text}`).toBeGreaterThan(0);
        expect(partials.every(([, i]) => i < idx)).toBe(true);
        const ends = partials.map(([f]) => (f['partial_clip'] as any).end_ms as number | null);
        expect(ends[0]).toBeNull();
        const known = ends.filter((e): e is number => e !== null);
        for (let i = 1; i < known.length; i++) expect(known[i]!).toBeGreaterThanOrEqual(known[i - 1]!);
        for (const e of known) expect(e).toBeLessThanOrEqual(clip.start_ms + clip.duration_ms);
        // The text grows as a prefix of the final text.
        const texts = partials.map(([f]) => (f['partial_clip'] as any).text as string);
        for (const t of texts) expect(clip.text.startsWith(t)).toBe(true);
      }
      const long = clips.find((c) => c.duration_ms > 4000)!;
      const longPartials = ofType(r.frames, 'partial_clip').filter((f) => (f['partial_clip'] as any).clip_uuid === long.clip_uuid);
      expect(longPartials.length).toBeGreaterThanOrEqual(4);
    });
  });

  it('gives the transcript text and speakers to the clips they overlap', async () => {
    await withEmulator({ scenario: CALL_SCENARIO as never }, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH), { config: 'default', audio: sample('call.wav') });
      const clips = clipsOf(r.frames);
      expect(clips.map((c) => c.text)).toEqual(TRANSCRIPT.map((t) => t.text));
      expect(clips.map((c) => c.speaker_label)).toEqual(TRANSCRIPT.map((t) => t.speaker_label));
    });
  });

  it('reports the true duration in done for WAV, MP3, raw s16le and 8 kHz mu-law', async () => {
    await withEmulator({}, async (emu) => {
      const wav = await runSession(wsUrl(emu, PATH), { config: 'default', audio: sample('call.wav') });
      const raw = await runSession(wsUrl(emu, PATH, RAW16), { config: 'default', audio: wavBody(sample('call.wav')) });
      const mulaw = await runSession(wsUrl(emu, PATH, { audio_format: 'mulaw', sample_rate: 8000, num_channels: 1 }), { config: 'default', audio: sample('call-8k.mulaw') });
      const mp3 = await runSession(wsUrl(emu, PATH, { audio_format: 'mp3' }), { config: 'default', audio: sample('call.mp3') });
      expect(wav.frames.at(-1)).toEqual({ type: 'done', duration_ms: 38507 });
      expect(raw.frames.at(-1)).toEqual({ type: 'done', duration_ms: 38507 });
      expect(mulaw.frames.at(-1)).toEqual({ type: 'done', duration_ms: Math.round((sample('call-8k.mulaw').length / 8000) * 1000) });
      const mp3Done = mp3.frames.at(-1)!;
      expect(mp3Done.type).toBe('done');
      expect(Math.abs((mp3Done['duration_ms'] as number) - 38507)).toBeLessThanOrEqual(100);
      for (const r of [raw, mulaw, mp3]) expectClipsMatchTranscript(r.frames);
    });
  });

  it('labels each channel of multi-channel raw audio as its own speaker', async () => {
    // Agent turns on channel 1, customer turns on channel 2, from the real call.
    const mono = wavBody(sample('call.wav'));
    const frames = mono.length / 2;
    const stereo = Buffer.alloc(frames * 4);
    for (let i = 0; i < frames; i++) {
      const ms = (i / 16000) * 1000;
      const turn = TRANSCRIPT.find((t) => ms >= t.start_ms - 200 && ms < t.end_ms + 200);
      const ch = turn?.speaker_label === '2' ? 1 : 0;
      stereo.writeInt16LE(mono.readInt16LE(i * 2), i * 4 + ch * 2);
    }
    await withEmulator({}, async (emu) => {
      const r = await runSession(wsUrl(emu, PATH, { ...RAW16, num_channels: 2 }), { config: 'default', audio: stereo });
      const clips = clipsOf(r.frames).sort((a, b) => a.start_ms - b.start_ms);
      expect(clips.map((c) => c.speaker_label)).toEqual(TRANSCRIPT.map((t) => t.speaker_label));
      // A channel's speaker is known from the first partial.
      expect(ofType(r.frames, 'partial_clip').every((f) => (f['partial_clip'] as any).speaker_label !== null)).toBe(true);
    });
  });
});

describe('the sample call scenario', () => {
  async function run(config: string): Promise<Frame[]> {
    return withEmulator({ scenario: CALL_SCENARIO as never }, async (emu) => (await runSession(wsUrl(emu, PATH), { config, audio: sample('call.wav') })).frames);
  }

  it('emits every event kind, each valid in the nested wire form with every field present', async () => {
    const frames = await run(ALL_PRESETS_CONFIG);
    expect(frames.flatMap(wireProblems)).toEqual([]);
    const kinds = new Set(frames.map((f) => f.type));
    for (const k of ['partial_clip', 'clip', 'clip_update', 'conversation_type', 'participant_role', 'behavior_detection', 'topics', 'topic_sentiment', 'summary', 'done']) {
      expect(kinds.has(k), k).toBe(true);
    }
    expect(frames.at(-1)?.type).toBe('done');
  });

  it('sends only events the client schema parses as sent, none unknown, for every config and on the STT path', async () => {
    const configs = [
      'default',
      JSON.stringify({ ...JSON.parse(ALL_PRESETS_CONFIG), stt: { emotion_signal: true, accent_signal: true, deepfake_signal: true } }),
      JSON.stringify({ produce_topics: false, produce_summary: false, produce_topic_sentiments: false, stt: { speaker_diarization: false } }),
      JSON.stringify({ conversation_types: [{ conversation_type_uuid: '11111111-1111-4111-8111-111111111111', name: 'Call' }], behaviors: ['preset:greeting'] }),
    ];
    await withEmulator({ scenario: CALL_SCENARIO as never }, async (emu) => {
      for (const path of [PATH, '/api/svc-2-stt-streaming']) {
        for (const config of configs) {
          const r = await runSession(wsUrl(emu, path), { config, audio: sample('call.wav') });
          expect(r.rawFrames).toEqual([]);
          expect(r.frames.at(-1)?.type, `${path} ${config}`).toBe('done');
          for (const frame of r.frames) {
            // The nested form exactly as sent, not the client's normalisation of it.
            const parsed = ServerEventSchema.safeParse(frame);
            expect(parsed.success ? [] : parsed.error.issues, `${path} ${config}: ${JSON.stringify(frame)}`).toEqual([]);
            expect(wireProblems(frame), JSON.stringify(frame)).toEqual([]);
          }
        }
      }
    });
  });

  it('keeps the ordering rules: updates after their clip and interleaved, a type change that discards roles, behaviors after the end of audio', async () => {
    const frames = await run(ALL_PRESETS_CONFIG);
    const at = (pred: (f: Frame) => boolean) => frames.findIndex(pred);
    const clipIndex = (uuid: string) => at((f) => f.type === 'clip' && (f['clip'] as any).clip_uuid === uuid);
    // Rule 2: each update after its clip; one comes after a later clip (interleaved); all before done.
    const updates = ofType(frames, 'clip_update');
    expect(updates.length).toBeGreaterThanOrEqual(4);
    let interleaved = false;
    for (const u of updates) {
      const i = frames.indexOf(u);
      const c = clipIndex((u['clip_update'] as any).clip_uuid);
      expect(c).toBeGreaterThanOrEqual(0);
      expect(i).toBeGreaterThan(c);
      if (frames.slice(c + 1, i).some((f) => f.type === 'clip')) interleaved = true;
    }
    expect(interleaved).toBe(true);
    // Rule 3: the type is picked after two clips, changes once, and both roles are sent again after the change.
    const types = ofType(frames, 'conversation_type').map((f) => f['pick'] as any);
    expect(types.map((t) => t.name)).toEqual(['Customer support', 'Billing dispute']);
    expect(types[0].conversation_type_uuid).not.toBe(types[1].conversation_type_uuid);
    const firstType = at((f) => f.type === 'conversation_type');
    expect(frames.slice(0, firstType).filter((f) => f.type === 'clip')).toHaveLength(2);
    const change = frames.lastIndexOf(ofType(frames, 'conversation_type')[1]!);
    const rolesAfter = frames.slice(change).filter((f) => f.type === 'participant_role').map((f) => (f['pick'] as any).speaker_label);
    expect(rolesAfter.sort()).toEqual(['1', '2']);
    // Rule 5: at most once per behavior and speaker; one arrives after the last clip; one before any type pick.
    const behaviors = ofType(frames, 'behavior_detection').map((f) => f['detection'] as any);
    const keys = behaviors.map((b) => `${b.behavior_uuid}|${b.speaker_label}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(behaviors).toHaveLength(5);
    const lastClip = frames.lastIndexOf(ofType(frames, 'clip').at(-1)!);
    expect(frames.slice(lastClip).some((f) => f.type === 'behavior_detection')).toBe(true);
    expect(at((f) => f.type === 'behavior_detection')).toBeLessThan(firstType);
    // Rule 6: topics replace (they grow, then shrink once).
    const topics = ofType(frames, 'topics').map((f) => (f['topics'] as string[]).length);
    expect(topics).toEqual([1, 2, 3, 2]);
    // Evidence names clips that were sent before.
    for (const b of behaviors) for (const u of b.evidence_clip_uuids) expect(clipIndex(u)).toBeGreaterThanOrEqual(0);
  });

  it('follows the config: no behaviors unless configured, no emotions unless asked, no topics or summary when turned off', async () => {
    const frames = await run(JSON.stringify({ produce_topics: false, produce_summary: false }));
    expect(ofType(frames, 'behavior_detection')).toEqual([]);
    expect(ofType(frames, 'clip_update')).toEqual([]);
    expect(ofType(frames, 'topics')).toEqual([]);
    expect(ofType(frames, 'summary')).toEqual([]);
    expect(ofType(frames, 'topic_sentiment').length).toBeGreaterThan(0);
    expect(clipsOf(frames).every((c) => c.emotion === null)).toBe(true);
    // Custom types: a single candidate is auto-selected.
    const only = { conversation_type_uuid: '11111111-1111-4111-8111-111111111111', name: 'Call' };
    const custom = await run(JSON.stringify({ conversation_types: [only] }));
    const picks = ofType(custom, 'conversation_type').map((f) => f['pick'] as any);
    expect(picks.length).toBeGreaterThan(0);
    for (const p of picks) expect(p).toMatchObject({ conversation_type_uuid: only.conversation_type_uuid, selection_source: 'auto_selected_single_option' });
  });

  it('runs the same through our own client, analyzeConversation', async () => {
    await withEmulator({ scenario: CALL_SCENARIO as never }, async (emu) => {
      const wav = sample('call.wav');
      const chunks = Array.from({ length: Math.ceil(wav.length / 262144) }, (_, i) => new Uint8Array(wav.subarray(i * 262144, (i + 1) * 262144)));
      const audio$ = withAudioMeta(from(chunks), { format: { audio_format: 'wav' } });
      const events: ServerEvent[] = await lastValueFrom(
        audio$.pipe(analyzeConversation({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, config: JSON.parse(ALL_PRESETS_CONFIG) }), toArray()),
      );
      expect(events.at(-1)).toEqual({ type: 'done', duration_ms: 38507 });
      expect(events.filter((e) => e.type === 'clip')).toHaveLength(10);
      expect(events.some((e) => e.type === 'unknown')).toBe(false);
      const summary = events.filter((e) => e.type === 'summary').at(-1);
      expect(summary).toMatchObject({ type: 'summary', text: expect.stringContaining('Northwind Bank') });
    });
  });
});

describe('timeline fields of the wrong type', () => {
  it('are not sent as events the client would refuse: the entry is dropped with a log line naming the field', async () => {
    const scenario = {
      timeline: [
        { after_end: true, event: { type: 'topic_sentiment', topic_sentiment: { speaker_label: '2', sentiment_score: -0.5 } } },
        { after_end: true, event: { type: 'topics', topics: ['billing', 7] } },
        { after_end: true, event: { type: 'summary', text: 42 } },
        { after_end: true, event: { type: 'conversation_type', pick: { name: 'Billing dispute', selection_source: 'guessed' } } },
        { after_end: true, event: { type: 'participant_role', pick: { speaker_label: '1', name: 'Agent', confidence: 'high' } } },
        { after_end: true, event: { type: 'behavior_detection', detection: { behavior: 'preset:greeting', speaker_label: '1', detected: 'yes' } } },
        { after_end: true, event: { type: 'clip_update', clip_update: { clip_uuid: '$clip:0', emotion: 3 } } },
        { after_end: true, event: { type: 'summary', text: 'A billing call.' } },
      ],
    };
    const logs: string[] = [];
    const config = JSON.stringify({ stt: { emotion_signal: true }, behaviors: ['preset:greeting'] });
    const r = await withEmulator({ scenario: scenario as never, log: (l) => logs.push(l) }, (emu) => runSession(wsUrl(emu, PATH), { config, audio: sample('call.wav') }));
    for (const frame of r.frames) expect(ServerEventSchema.safeParse(frame).success, JSON.stringify(frame)).toBe(true);
    const late = r.frames.filter((f) => !['partial_clip', 'clip', 'done'].includes(f.type));
    expect(late).toEqual([{ type: 'summary', text: 'A billing call.' }]);
    expect(logs.filter((l) => l.startsWith('timeline:'))).toEqual([
      'timeline: topic_sentiment not sent: topic and speaker_label are required',
      'timeline: topics not sent: topics has the wrong type',
      'timeline: summary not sent: text has the wrong type',
      'timeline: conversation_type not sent: selection_source has the wrong type',
      'timeline: participant_role not sent: confidence has the wrong type',
      'timeline: behavior_detection not sent: detected has the wrong type',
      'timeline: clip_update not sent: emotion has the wrong type',
    ]);
  });
});

describe('timeline resolution, step by step', () => {
  const call = { conversation_type_uuid: '11111111-1111-4111-8111-111111111111', name: 'Call' };
  const sales = { conversation_type_uuid: '22222222-2222-4222-8222-222222222222', name: 'Sales' };
  it.each([
    ['a name among several candidates', { conversation_types: [call, sales] }, { name: 'sales' }, { ...sales, selection_source: 'inferred' }],
    ['the only candidate, whatever the name', { conversation_types: [call] }, { name: 'Nope' }, { ...call, selection_source: 'auto_selected_single_option' }],
    ['an unknown name: the built-in default', { conversation_types: [call, sales] }, { name: 'Nope' }, { conversation_type_uuid: BUILTIN_DEFAULT_CONVERSATION_TYPE.conversation_type_uuid, selection_source: 'default' }],
    ['no candidate and no default: nothing', { conversation_types: [], default_conversation_type: null }, { name: 'Sales' }, undefined],
  ])('conversation type: %s', (_why, cfg, pick, want) => {
    const got = resolveTypePick(cfg, pick);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toMatchObject({ confidence: 0.8, detail: null, reasoning: null, ...want });
  });

  it('participant role: needs a speaker, keeps given fields, refuses a mistyped one', () => {
    expect(resolveRolePick({}, undefined, { name: 'Agent' })).toBeUndefined();
    expect(resolveRolePick({}, undefined, { speaker_label: '1', name: 'agent', confidence: 0.5, reasoning: 'greets' })).toMatchObject({
      speaker_label: '1',
      name: 'Agent',
      confidence: 0.5,
      selection_source: 'inferred',
      detail: null,
      reasoning: 'greets',
    });
    expect(() => resolveRolePick({}, undefined, { speaker_label: '1', name: 'Agent', detail: 3 })).toThrow(TimelineFieldError);
  });

  it('"$clip:N" references: found anywhere, replaced by UUIDs, missing ones dropped from arrays and nulled elsewhere', () => {
    const ev = { type: 'behavior_detection', detection: { evidence_clip_uuids: ['$clip:0', '$clip:2'], definitive_clip_uuid: '$clip:2' } };
    expect([...clipRefs(ev)].sort()).toEqual([0, 2]);
    expect(substitute(ev, ['u0'])).toEqual({ type: 'behavior_detection', detection: { evidence_clip_uuids: ['u0'], definitive_clip_uuid: null } });
  });
});
