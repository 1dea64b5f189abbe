// Which codec the bytes of an unmapped payload type are, when their timing leaves two open:
// μ-law or A-law (the same byte per sample), and L16 mono or G.711 stereo (the same two bytes
// per tick). Pure functions of the payloads seen; the guesser asks once the rate is known.
import { alawDecode, mulawDecode } from '../audio/g711.js';

/** One reading of the bytes: a codec and a channel count that the timestamp steps allow. */
export interface ContentReading {
  readonly codec: 'PCMU' | 'PCMA' | 'L16';
  readonly channels: 1 | 2;
}

/** What the samples say: the reading, or why they do not tell (look at more, or give up). */
export type ContentVerdict = { readonly reading: ContentReading } | { readonly undecided: string };

/** Samples (per channel) under which a verdict is not given: 50 ms at 8 kHz. */
const MIN_SAMPLES = 400;
/** Energy per sample below which a signal is as good as silent: 256² (−42 dBFS). */
const FLOOR = 256 * 256;

/**
 * How unlike sound a reading of `bytes` is: the energy of the sample-to-sample difference plus
 * the squared mean (a DC offset), over the energy, per channel. Real audio at telephone rates
 * is smooth and centred (speech about 0.1–0.4 at 8–16 kHz, and digital silence read with its
 * own law 0); the same bytes read with the wrong law, or L16 read as two G.711 channels, come
 * out near white or offset (1–2). Silence read with the other law is a constant far from 0
 * (μ-law's 0xFF is +848 in A-law, A-law's 0xD5 is −716 in μ-law): a pure offset, about 1.
 */
export function roughness(bytes: Uint8Array, reading: ContentReading): number {
  const samples = decode(bytes, reading.codec);
  const ch = reading.channels;
  let diff = 0;
  let energy = 0;
  let offset = 0;
  for (let c = 0; c < ch; c++) {
    let sum = 0;
    let prev = samples[c] ?? 0;
    let n = 0;
    for (let i = c; i < samples.length; i += ch) {
      const x = samples[i]!;
      sum += x;
      energy += x * x;
      diff += (x - prev) * (x - prev);
      prev = x;
      n++;
    }
    if (n > 0) offset += (sum * sum) / n;
  }
  // A floor of −42 dBFS under the energy: near-silence is judged by its offset, not its hiss.
  return (diff + offset) / (energy + samples.length * FLOOR);
}

/**
 * The level of the quietest 20 ms (160 samples) of any channel of a reading of `bytes`, RMS.
 * A call has pauses, and a pause read with its own law is near 0 (a few units of hiss); read
 * with the other, each byte of it becomes ±700–850 (μ-law's 0xff/0x7f are ±848 in A-law, A-law's
 * 0xd5/0x55 ±716 in μ-law), and an L16 pause read as two G.711 channels becomes full-scale
 * swings (its high bytes 0x00/0xff are μ-law's −32124 and 0).
 */
export function quietest(bytes: Uint8Array, reading: ContentReading): number {
  const samples = decode(bytes, reading.codec);
  const ch = reading.channels;
  const block = 160 * ch;
  let min = Infinity;
  for (let start = 0; start + block <= samples.length; start += block) {
    for (let c = 0; c < ch; c++) {
      let energy = 0;
      for (let i = start + c; i < start + block; i += ch) energy += samples[i]! * samples[i]!;
      min = Math.min(min, Math.sqrt(energy / 160));
    }
  }
  return min;
}

function decode(bytes: Uint8Array, codec: ContentReading['codec']): Int16Array {
  if (codec === 'PCMU') return mulawDecode(bytes);
  if (codec === 'PCMA') return alawDecode(bytes);
  // RTP's L16 is big-endian (RFC 3551).
  const out = new Int16Array(bytes.byteLength >> 1);
  for (let i = 0; i < out.length; i++) out[i] = ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!) << 16 >> 16;
  return out;
}

/**
 * The reading among `readings` that the samples leave no doubt about:
 * - by their silence: one reading's quietest 20 ms is near silent (RMS ≤ 256, −42 dBFS) and the
 *   next reading's is at least four times as loud (a pause read with the wrong law or width is
 *   loud, see `quietest`); a call's pauses settle it at once;
 * - else by their sign and segment bits: the smoothest reading by a clear margin (the next at
 *   least 1.5 times as rough, see `roughness`), for audio without a pause (music).
 *
 * Undecided, with why, when there are too few samples, or when the audio is noise-like enough
 * that two readings are alike (applause, a hiss): more audio may settle it.
 */
export function tellContent(bytes: Uint8Array, readings: readonly ContentReading[]): ContentVerdict {
  if (readings.length === 1) return { reading: readings[0]! };
  const widest = Math.max(...readings.map((r) => (r.codec === 'L16' ? 2 : 1) * r.channels));
  if (bytes.byteLength / widest < MIN_SAMPLES) return { undecided: 'too few samples yet' };
  const byQuiet = readings.map((reading) => ({ reading, level: quietest(bytes, reading) })).sort((a, b) => a.level - b.level);
  const [quiet, louder] = byQuiet as [(typeof byQuiet)[number], (typeof byQuiet)[number]];
  if (quiet.level <= 256 && louder.level >= 4 * quiet.level + 128) return { reading: quiet.reading };
  const scored = readings.map((reading) => ({ reading, score: roughness(bytes, reading) })).sort((a, b) => a.score - b.score);
  const [best, next] = scored as [(typeof scored)[number], (typeof scored)[number]];
  if (next.score >= 1.5 * best.score + 0.05) return { reading: best.reading };
  return { undecided: `its samples read alike as ${scored.map((s) => `${label(s.reading)} (${s.score.toFixed(2)})`).join(' and ')}` };
}

/** `PCMU/1`-style name of a reading, for messages. */
export function label(r: ContentReading): string {
  return `${r.codec}${r.channels === 2 ? ' stereo' : ''}`;
}
