// Scenarios that follow a resume. A client that reconnects sends its audio again from a commit
// point, in a new session whose time starts at zero; a script timed against the audio would
// play from its top. A scenario that names its audio (`audio`) is followed instead: the new
// session's first audio is found in the named audio by content (10 ms level envelopes, then
// the exact sample where the rates agree), the engine is run silently through the named audio
// up to there (so clip numbers, transcript turns and the timeline are where they were), and
// its events are sent on the session's own clock. Where it cannot be found, the session says
// so (log and connection summary) and gets speech segments only, not the script from its top.
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Engine, EngineOutput } from './engine.js';
import type { EngineEvent } from './engineEvents.js';
import { RawPcmDecoder, type PcmBlock } from './pcm.js';
import type { Scenario } from './scenario.js';
import { levelDb } from './vad.js';
import { parseWavHeader, wavSampleFormat } from './wav.js';

/** The named audio, decoded once: mono samples at its rate and their 10 ms level envelope. */
export interface NamedAudio {
  readonly path: string;
  readonly sampleRate: number;
  readonly samples: Float32Array;
  readonly envelope: Float32Array;
}

/** Envelope frames: 10 ms. */
const FRAME_MS = 10;
/** Levels below this are all the same silence. */
const FLOOR_DB = -70;
/** A frame this loud is voice, for the window's worth. */
const VOICED_DB = -45;
/** The window decides once it holds this many voiced frames and this much audio… */
const WINDOW_VOICED_FRAMES = 40;
const WINDOW_MIN_FRAMES = 100;
/** …or this much audio whatever it holds. */
const WINDOW_MAX_FRAMES = 800;
/** A match is this close (mean dB difference) and clearly better than any other place. */
const MATCH_DB = 4;
const MARGIN_DB = 3;
/** How far from the aligned point an utterance may end (or start) and still count as before it (frames of two clocks). */
const PAST_TOLERANCE_MS = 30;

const cache = new Map<string, { readonly mtimeMs: number; readonly audio: NamedAudio }>();

/** The 10 ms level envelope of mono samples, in dB, floored. */
export function envelopeOf(samples: Float32Array, sampleRate: number): Float32Array {
  const frame = Math.max(1, Math.round((sampleRate * FRAME_MS) / 1000));
  const out = new Float32Array(Math.floor(samples.length / frame));
  for (let i = 0; i < out.length; i++) out[i] = Math.max(FLOOR_DB, levelDb(samples, i * frame, (i + 1) * frame));
  return out;
}

/** Mono float samples of interleaved PCM. */
function mono(block: PcmBlock): Float32Array {
  if (block.channels === 1) return block.data;
  const out = new Float32Array(block.data.length / block.channels);
  for (let i = 0; i < out.length; i++) {
    let sum = 0;
    for (let c = 0; c < block.channels; c++) sum += block.data[i * block.channels + c]!;
    out[i] = sum / block.channels;
  }
  return out;
}

/** Read a scenario's named audio (a PCM or G.711 WAV), decoded once per file version. Throws when it cannot be read. */
export function loadNamedAudio(path: string): NamedAudio {
  const mtimeMs = statSync(path).mtimeMs;
  const hit = cache.get(path);
  if (hit && hit.mtimeMs === mtimeMs) return hit.audio;
  const bytes = readFileSync(path);
  const info = parseWavHeader(bytes);
  const format = info ? wavSampleFormat(info) : undefined;
  if (!info || !format) throw new Error(`${basename(path)} is not a PCM or G.711 WAV file`);
  const end = info.dataBytes !== undefined ? Math.min(bytes.length, info.dataOffset + info.dataBytes) : bytes.length;
  const block = new RawPcmDecoder(format, info.sampleRate, info.channels).push(bytes.subarray(info.dataOffset, end));
  const samples = mono(block);
  const audio: NamedAudio = { path, sampleRate: info.sampleRate, samples, envelope: envelopeOf(samples, info.sampleRate) };
  cache.set(path, { mtimeMs, audio });
  return audio;
}

/** Where a session's audio starts in the named audio, or why it cannot be told. */
export type Alignment = { readonly offsetMs: number } | { readonly reason: string };

/**
 * Find `window` (mono samples at `rate`, the session's first audio) in `named`: the envelope
 * offset with the least mean level difference, accepted when it is close and no other place
 * (beyond a few frames) comes near; then, at the same rate, the exact sample within a frame.
 */
export function align(named: NamedAudio, window: Float32Array, rate: number): Alignment {
  const env = envelopeOf(window, rate);
  const n = env.length;
  if (n < 10) return { reason: 'too little audio to find' };
  if (named.envelope.length < n) return { reason: 'the session has more audio than the named audio' };
  let best = { k: -1, cost: Infinity };
  const costs = new Float32Array(named.envelope.length - n + 1);
  for (let k = 0; k < costs.length; k++) {
    // A place already further than the best plus the margin can be neither the best nor its rival.
    const limit = (best.cost + MARGIN_DB) * n;
    let sum = 0;
    let i = 0;
    for (; i < n && sum < limit; i++) sum += Math.abs(env[i]! - named.envelope[k + i]!);
    costs[k] = i < n ? Infinity : sum / n;
    if (costs[k]! < best.cost) best = { k, cost: costs[k]! };
  }
  let runnerUp = Infinity;
  for (let k = 0; k < costs.length; k++) if (Math.abs(k - best.k) > 5 && costs[k]! < runnerUp) runnerUp = costs[k]!;
  if (best.cost > MATCH_DB) return { reason: `no place in it sounds like the session's start (closest: ${best.cost.toFixed(1)} dB apart)` };
  if (runnerUp < best.cost + MARGIN_DB) return { reason: 'the session\'s start sounds like several places in it' };
  let offsetMs = best.k * FRAME_MS;
  if (rate === named.sampleRate) {
    // The same samples, give or take a frame: the exact one (the least absolute difference).
    const frame = Math.round((rate * FRAME_MS) / 1000);
    const base = best.k * frame;
    // Over a second: a start in silence matches anywhere near; the voice after it does not.
    const span = Math.min(window.length, 100 * frame);
    let exact = { at: base, diff: Infinity };
    for (let at = Math.max(0, base - frame); at <= base + frame && at + span <= named.samples.length; at++) {
      let diff = 0;
      for (let i = 0; i < span; i++) diff += Math.abs(window[i]! - named.samples[at + i]!);
      if (diff < exact.diff) exact = { at, diff };
    }
    offsetMs = (exact.at / rate) * 1000;
  }
  return { offsetMs };
}

/** Linear resampling of mono samples (for a session at another rate than the named audio). */
function resample(samples: Float32Array, from: number, to: number): Float32Array {
  if (from === to) return samples;
  const out = new Float32Array(Math.floor((samples.length * to) / from));
  for (let i = 0; i < out.length; i++) {
    const x = (i * from) / to;
    const j = Math.floor(x);
    const a = samples[j] ?? 0;
    const b = samples[j + 1] ?? a;
    out[i] = a + (b - a) * (x - j);
  }
  return out;
}

/**
 * Times in an event's payload, moved `by` ms (the engine's clock to the session's), with the
 * utterance's span on the engine's clock (`endMs` undefined while a partial has none). An
 * utterance that began before the session's audio is cut at its start, as the session heard it.
 */
function rebase(event: EngineEvent, by: number): { event: EngineEvent; startMs: number | undefined; endMs: number | undefined } {
  if (by === 0) return { event, startMs: undefined, endMs: undefined };
  const e = event as unknown as Record<string, unknown>;
  for (const key of ['clip', 'partial_clip', 'segment']) {
    const p = e[key] as Record<string, unknown> | undefined;
    if (!p || typeof p['start_ms'] !== 'number') continue;
    const startMs = p['start_ms'];
    const moved: Record<string, unknown> = { ...p, start_ms: Math.max(0, startMs - by) };
    let endMs: number | undefined;
    if (typeof p['end_ms'] === 'number') {
      endMs = p['end_ms'];
      moved['end_ms'] = Math.max(0, endMs - by);
    }
    if (typeof p['duration_ms'] === 'number') {
      endMs = startMs + p['duration_ms'];
      moved['duration_ms'] = Math.max(0, endMs - Math.max(startMs, by));
    }
    return { event: { ...e, [key]: moved } as unknown as EngineEvent, startMs, endMs };
  }
  return { event, startMs: undefined, endMs: undefined };
}

/**
 * What a session playing a scenario that names its audio found: aligned at `offsetMs`, or not,
 * and why (`scripted`: the named audio could not be read, so the script plays from its top).
 */
export type AlignmentNote = { readonly audio: string; readonly offsetMs: number } | { readonly audio: string; readonly reason: string; readonly scripted?: true };

/**
 * The engine of a session whose scenario names its audio: it holds the session's first audio
 * until it can be found in the named audio, then runs the real engine through the named
 * audio up to that point with its events unsent, and from there on the session's audio with
 * its events on the session's clock (those of clips the session before had finalized are not
 * sent again). Not found: the real engine without the script (speech segments only). A named
 * audio that cannot be read tells nothing: the script plays as written.
 */
export class AligningEngine implements Engine {
  private inner: Engine | undefined;
  private readonly held: PcmBlock[] = [];
  private heldFrames = 0;
  private voicedFrames = 0;
  private offsetMs = 0;
  private muted = false;
  /** The first quarter second was compared with the named audio's top (and was not it). */
  private topChecked = false;
  private named: NamedAudio | undefined;

  constructor(
    private readonly scenario: Scenario & { readonly audio: string },
    private readonly make: (scenario: Scenario, out: EngineOutput) => Engine,
    private readonly out: EngineOutput,
    private readonly onNote: (note: AlignmentNote) => void,
  ) {}

  get audioMs(): number {
    if (this.inner) return Math.max(0, this.inner.audioMs - this.offsetMs);
    return this.held.reduce((ms, b) => ms + (b.data.length / b.channels / b.sampleRate) * 1000, 0);
  }

  push(block: PcmBlock): void {
    if (this.inner) return this.inner.push(block);
    // Nothing to align to: no need to hold anything.
    if (this.namedAudio() === undefined) {
      this.held.push(block);
      return this.decide();
    }
    this.held.push(block);
    for (const level of envelopeOf(mono(block), block.sampleRate)) {
      this.heldFrames++;
      if (level > VOICED_DB) this.voicedFrames++;
    }
    if (this.firstIsTheTop() || (this.voicedFrames >= WINDOW_VOICED_FRAMES && this.heldFrames >= WINDOW_MIN_FRAMES) || this.heldFrames >= WINDOW_MAX_FRAMES) this.decide();
  }

  flush(): void {
    if (!this.inner) this.decide();
    this.inner!.flush();
  }

  finish(): void {
    this.inner!.finish();
  }

  /** A session that starts with the named audio's very first samples (a first session, usually) needs no window. */
  private firstIsTheTop(): boolean {
    if (this.topChecked) return false;
    const named = this.namedAudio();
    const first = this.held[0];
    if (!named || !first || first.sampleRate !== named.sampleRate || first.channels !== 1) return false;
    const have = this.held.reduce((n, b) => n + b.data.length / b.channels, 0);
    const need = Math.round(named.sampleRate * 0.25);
    if (have < need) return false;
    this.topChecked = true;
    const window = this.window().subarray(0, need);
    let loud = false;
    for (let i = 0; i < need; i++) {
      if (Math.abs(window[i]! - named.samples[i]!) > 1e-6) return false;
      if (Math.abs(window[i]!) > 1e-3) loud = true;
    }
    return loud;
  }

  private namedAudio(): NamedAudio | undefined {
    if (this.named) return this.named;
    try {
      this.named = loadNamedAudio(this.scenario.audio);
    } catch {
      return undefined;
    }
    return this.named;
  }

  private window(): Float32Array {
    const parts = this.held.map(mono);
    const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  private decide(): void {
    const audio = basename(this.scenario.audio);
    const first = this.held[0];
    let found: Alignment;
    const named = this.namedAudio();
    if (!named) {
      // Without the audio nothing can be told, a resume included: the script plays as written.
      this.out.log?.(`scenario: its audio ${this.scenario.audio} cannot be read as a PCM WAV: the script plays from its top, as if it named none`);
      this.onNote({ audio, reason: `${audio} cannot be read as a PCM WAV: played from the top`, scripted: true });
      this.inner = this.make(this.scenario, this.out);
      for (const b of this.held.splice(0)) this.inner.push(b);
      return;
    }
    if (!first) found = { offsetMs: 0 };
    else if (first.channels !== 1) found = { reason: 'the session is not mono' };
    else found = align(named, this.window(), first.sampleRate);

    if ('reason' in found) {
      this.out.log?.(`scenario: the session's audio could not be aligned to ${audio} (${found.reason}): speech segments only, not the script from its top`);
      this.onNote({ audio, reason: found.reason });
      this.inner = this.make({ ...this.scenario, transcript: [], timeline: [] }, this.out);
    } else {
      this.offsetMs = found.offsetMs;
      if (found.offsetMs > 0) this.out.log?.(`scenario: the session's audio starts ${(found.offsetMs / 1000).toFixed(2)} s into ${audio} (a resumed stream): the script goes on from there`);
      this.onNote({ audio, offsetMs: found.offsetMs });
      this.inner = this.make(this.scenario, this.relay());
      if (found.offsetMs > 0 && named && first) {
        // The named audio up to the point, at the session's rate, heard with nothing sent.
        const upTo = Math.round((found.offsetMs / 1000) * named.sampleRate);
        this.muted = true;
        this.inner.push({ sampleRate: first.sampleRate, channels: 1, data: resample(named.samples.subarray(0, upTo), named.sampleRate, first.sampleRate) });
        this.muted = false;
      }
    }
    const held = this.held.splice(0);
    for (const b of held) this.inner.push(b);
  }

  /**
   * The engine's output on the session's clock: nothing while muted, nothing of an utterance
   * that ended by the point (the session before heard it whole, and finalized it). One that
   * began before the point and goes on past it is this session's too, from its start, as the
   * service would hear it: a client resumes there only when it kept too little audio to resume
   * before, and dropping it would lose the utterance twice (issue 45).
   */
  private relay(): EngineOutput {
    return {
      send: (event) => {
        if (this.muted) return;
        const { event: moved, startMs, endMs } = rebase(event, this.offsetMs);
        if (startMs !== undefined && startMs < this.offsetMs - PAST_TOLERANCE_MS && (endMs === undefined || endMs <= this.offsetMs + PAST_TOLERANCE_MS)) return;
        this.out.send(moved);
      },
      clipSent: (i) => {
        if (!this.muted) this.out.clipSent?.(i);
      },
      ...(this.out.log ? { log: this.out.log } : {}),
    };
  }
}
