// How `analyze` shows a session on a terminal: final clips scroll by as they arrive (never
// cleared, so nothing is lost on a short terminal), under a short live status area redrawn
// in place (session status, position / duration, percent, rate, ETA, what made the results,
// type, roles, the utterance in progress); at the end, the complete transcript and the summary.
// Every figure comes from `sessionFigures` and every label from `stats.label`: this formats.
import { styleText } from 'node:util';
import type { Writable } from 'node:stream';
import type { BehaviorDetection, ServerEvent } from '../schema/events.js';
import type { SessionStats } from '../session/stats.js';
import type { SessionFigures } from '../session/figures.js';
import { labelText } from '../schema/resultLabel.js';
import type { ConversationSnapshot } from '../state/snapshot.js';

type Style = Parameters<typeof styleText>[0];

/**
 * Whether to colour: `FORCE_COLOR` (not `0`) forces it, `NO_COLOR` (any non-empty value)
 * turns it off, else only on a terminal whose `TERM` is not `dumb`.
 */
export function colorEnabled(stream: { isTTY?: boolean | undefined }, env: NodeJS.ProcessEnv): boolean {
  const force = env['FORCE_COLOR'];
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (env['NO_COLOR']) return false;
  return stream.isTTY === true && env['TERM'] !== 'dumb';
}

const SPEAKER_COLOURS: readonly Style[] = ['cyan', 'magenta', 'yellow', 'green', 'blue'];
const EMOTION_COLOURS: Readonly<Record<string, Style>> = {
  happy: 'green',
  neutral: 'gray',
  frustrated: 'red',
  angry: 'red',
  sad: 'blue',
  worried: 'yellow',
};
/** Lines of the status area at most; the rest of the screen is the scrolling transcript. */
const STATUS_LINES = 5;
/** The width assumed for the status area when the terminal reports none (0 or undefined). */
const FALLBACK_WIDTH = 80;

/** `m:ss.s`, or `h:mm:ss` past an hour. */
export function clock(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(Math.floor(sec)).padStart(2, '0')}` : `${m}:${sec.toFixed(1).padStart(4, '0')}`;
}

/** The parts of the status line about the audio: position / duration, percent (0-100), rate, ETA. */
export function progressText(p: Pick<SessionFigures, 'positionMs' | 'durationMs' | 'percent' | 'rate' | 'etaMs'>): string {
  const parts: string[] = [];
  if (p.positionMs !== undefined) {
    parts.push(p.durationMs !== undefined ? `${clock(p.positionMs)} / ${clock(p.durationMs)}` : clock(p.positionMs));
    if (p.percent !== undefined) parts.push(`${p.percent}%`);
    if (p.rate !== undefined) parts.push(`${p.rate >= 10 ? p.rate.toFixed(0) : p.rate.toFixed(1)}x`);
    if (p.etaMs !== undefined) parts.push(`ETA ${clock(p.etaMs)}`);
  } else if (p.durationMs !== undefined) {
    parts.push(`0:00.0 / ${clock(p.durationMs)}`);
  }
  return parts.join('  ');
}

/** A clip's text, or a note that it has none (the emulator never invents a transcript). */
export function textOf(c: { text?: string | undefined; duration_ms?: number | undefined }): string {
  if (c.text) return c.text;
  return c.duration_ms !== undefined ? `(no transcript, ${(c.duration_ms / 1000).toFixed(1)} s)` : '(no transcript)';
}

/** Cut to `width` visible characters (no cut when the width is unknown). */
function fit(text: string, width: number | undefined): string {
  if (width === undefined || text.length <= width) return text;
  return width <= 1 ? text.slice(0, width) : `${text.slice(0, width - 1)}…`;
}

/** The live view of one session on a terminal. */
export class TerminalView {
  private statusDrawn = 0;
  private lastDraw = 0;
  private readonly speakers = new Map<string, number>();

  constructor(
    private readonly out: Writable & { columns?: number | undefined },
    private readonly color: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** The terminal's width, or undefined when it reports none (0 means unknown, not zero). */
  private width(): number | undefined {
    const c = this.out.columns;
    return c !== undefined && c > 0 ? c : undefined;
  }

  private style(format: Style | readonly Style[], text: string): string {
    return this.color ? styleText(format as Style, text) : text;
  }

  private speaker(s: ConversationSnapshot, label: string | null | undefined): string {
    if (label == null) return this.style('dim', 'unknown speaker');
    let i = this.speakers.get(label);
    if (i === undefined) {
      i = this.speakers.size;
      this.speakers.set(label, i);
    }
    const role = s.conversation.roles.get(label)?.name;
    return this.style(['bold', SPEAKER_COLOURS[i % SPEAKER_COLOURS.length]!], `Speaker ${label}`) + (role ? ` (${role})` : '');
  }

  private clipLine(s: ConversationSnapshot, c: { start_ms?: number | undefined; speaker_label?: string | null | undefined; text?: string | undefined; duration_ms?: number | undefined; emotion?: string | null | undefined }): string {
    const at = c.start_ms !== undefined ? this.style('dim', `[${clock(c.start_ms).padStart(7)}] `) : '';
    const text = c.text ? c.text : this.style('dim', textOf(c));
    const emotion = c.emotion ? ` ${this.style(EMOTION_COLOURS[c.emotion.toLowerCase()] ?? 'gray', `<${c.emotion}>`)}` : '';
    return `${at}${this.speaker(s, c.speaker_label)}: ${text}${emotion}`;
  }

  /** Clear the status area (the cursor ends where it began). */
  private clearStatus(): void {
    if (this.statusDrawn > 0) this.out.write(`\x1b[${this.statusDrawn}A\r\x1b[J`);
    this.statusDrawn = 0;
  }

  private statusLines(s: ConversationSnapshot, stats: SessionStats, progress: SessionFigures): string[] {
    const status = stats.status === 'failed' ? this.style(['bold', 'red'], 'failed') : stats.status === 'done' ? this.style(['bold', 'green'], 'done') : this.style('bold', stats.status);
    const lines = [`${this.style('cyan', '●')} ${status}  ${progressText(progress)}  ${this.style('dim', `${stats.eventsReceived} events`)}`];
    // What made the results, unless it is the service (then nothing needs saying).
    if (stats.label !== undefined && stats.label.source !== 'service') lines.push(this.style('yellow', `source: ${labelText(stats.label)}`));
    const type = s.conversation.type;
    const roles = [...s.conversation.roles].map((r) => `${r.speaker_label}=${r.name ?? r.participant_role_uuid ?? '?'}`);
    if (type || roles.length > 0) lines.push(`type: ${type ? (type.name ?? type.conversation_type_uuid) : '—'}   roles: ${roles.join(' ') || '—'}`);
    if (s.aggregates.topics?.length) lines.push(`topics: ${s.aggregates.topics.join(', ')}`);
    const partial = [...s.clips.transcript].reverse().find((e) => e.status === 'partial');
    if (partial?.clip.text) lines.push(`${this.style('dim', '…')} ${this.speaker(s, partial.clip.speaker_label)}: ${this.style('italic', partial.clip.text ?? '')}`);
    return lines.slice(0, STATUS_LINES);
  }

  private drawStatus(s: ConversationSnapshot, stats: SessionStats, progress: SessionFigures): void {
    const width = this.width() ?? FALLBACK_WIDTH;
    // Styled text is longer than it looks: fit the plain text, then style by re-rendering.
    const lines = this.statusLines(s, stats, progress).map((line) => (this.color ? fitStyled(line, width) : fit(line, width)));
    this.out.write(`${lines.join('\n')}\n`);
    this.statusDrawn = lines.length;
  }

  /** One event: a final clip or a behavior scrolls into the transcript; the status is redrawn (at most every 100 ms). */
  update(e: ServerEvent, s: ConversationSnapshot, stats: SessionStats, progress: SessionFigures): void {
    let line: string | undefined;
    if (e.type === 'clip') line = this.clipLine(s, e.clip);
    else if (e.type === 'behavior_detection') {
      const d = e.detection;
      const start = behaviorStartMs(s, d);
      const at = start !== undefined ? ` at ${clock(start)}` : '';
      line = this.style('dim', `  ▸ ${d.behavior_name ?? d.behavior_uuid} (speaker ${d.speaker_label ?? '-'}${at})`);
    }
    const now = this.now();
    if (line === undefined && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.clearStatus();
    if (line !== undefined) this.out.write(`${line}\n`);
    this.drawStatus(s, stats, progress);
  }

  /** Redraw the status area (the clock moved, the status changed) without a new event; at most every 100 ms. */
  refresh(s: ConversationSnapshot, stats: SessionStats, progress: SessionFigures): void {
    const now = this.now();
    if (now - this.lastDraw < 100) return;
    this.lastDraw = now;
    this.clearStatus();
    this.drawStatus(s, stats, progress);
  }

  /** The end: the status area gives way to the complete transcript and the summary. */
  finish(s: ConversationSnapshot, stats: SessionStats, progress: SessionFigures): void {
    this.clearStatus();
    const rule = (title: string): string => this.style('bold', `── ${title} ${'─'.repeat(Math.max(3, Math.min(this.width() ?? 60, 60) - title.length - 4))}`);
    const clips = [...s.clips.clips];
    this.out.write(`\n${rule(`transcript (${clips.length} ${clips.length === 1 ? 'clip' : 'clips'})`)}\n`);
    for (const c of clips) this.out.write(`${this.clipLine(s, c)}\n`);
    const type = s.conversation.type;
    const roles = [...s.conversation.roles].map((r) => `${r.speaker_label}=${r.name ?? r.participant_role_uuid ?? '?'}`);
    const sentiments = [...s.aggregates.topicSentiments].map(
      (t) => `${t.topic}/${t.speaker_label} ${t.sentiment_score >= 0 ? '+' : ''}${t.sentiment_score.toFixed(2)}`,
    );
    const behaviors = [...s.behaviors.detections].map((b) => {
      const start = behaviorStartMs(s, b);
      const at = start !== undefined ? ` ${clock(start)}` : '';
      return `${b.behavior_name ?? b.behavior_uuid} (${b.speaker_label ?? '-'}${at})`;
    });
    this.out.write(`${rule('summary')}\n`);
    const row = (k: string, v: string): void => void this.out.write(`${this.style('bold', k.padEnd(10))} ${v}\n`);
    row('type', type ? `${type.name ?? type.conversation_type_uuid} (${type.selection_source})` : '—');
    row('roles', roles.join('  ') || '—');
    row('topics', s.aggregates.topics?.join(', ') || '—');
    row('sentiment', sentiments.join('  ') || '—');
    row('behaviors', behaviors.join('  ') || '—');
    row('summary', s.aggregates.summary ?? '—');
    const status = stats.status === 'done' ? this.style('green', 'done') : stats.status === 'failed' ? this.style('red', 'failed') : stats.status;
    row('session', `${status}, ${audioSummary(s, progress)} in ${clock(progress.wallMs)}${reconnectSummary(progress)}`);
    if (stats.label !== undefined && stats.label.source !== 'service') row('source', this.style('yellow', labelText(stats.label)));
    else if (clips.length > 0 && clips.every((c) => !c.text)) {
      this.out.write(this.style('dim', 'No clip has text: the emulator does not transcribe. Give it a scenario file (--scenario) or use the real service.\n'));
    }
  }
}

/**
 * How much audio the summary reports: the analysed duration after `done` (what the service
 * acknowledged); otherwise the audio actually sent (never the file's length, which a failed
 * session did not send), with the whole when it is known, and how far the finalized clips
 * reach (what the service acknowledged by analysing it).
 */
export function audioSummary(s: ConversationSnapshot, progress: Pick<SessionFigures, 'positionMs' | 'durationMs'>): string {
  const done = s.aggregates.audioDurationMs;
  if (done !== undefined && done !== null) return `${clock(done)} of audio`;
  const analysed = analysedMs(s);
  const through = analysed !== undefined ? `, analysed through ${clock(analysed)}` : '';
  if (progress.positionMs === undefined) return `audio sent unknown${through}`;
  return `${clock(progress.positionMs)} of audio sent${progress.durationMs !== undefined ? ` (of ${clock(progress.durationMs)})` : ''}${through}`;
}

/** The end of the last finalized clip, on the stream's axis; undefined before any. */
function analysedMs(s: ConversationSnapshot): number | undefined {
  let end: number | undefined;
  for (const c of s.clips.clips) {
    if (c.start_ms === undefined) continue;
    const e = c.start_ms + (c.duration_ms ?? 0);
    if (end === undefined || e > end) end = e;
  }
  return end;
}

/**
 * ", 2 reconnects (1.3 s)" after a session that reconnected (the time from each outage's first
 * failure to the first audio sent again), and the audio dropped if any; nothing otherwise.
 */
export function reconnectSummary(f: Pick<SessionFigures, 'reconnects' | 'reconnectingMs' | 'bytes' | 'audioMs'>): string {
  if (f.reconnects === 0 && f.bytes.dropped === 0) return '';
  const dropped = f.bytes.dropped === 0 ? '' : `, ${f.audioMs.dropped !== undefined ? `${(f.audioMs.dropped / 1000).toFixed(1)} s` : `${f.bytes.dropped} bytes`} of audio dropped`;
  const reconnects = f.reconnects === 0 ? '' : `, ${f.reconnects} reconnect${f.reconnects === 1 ? '' : 's'} (${(f.reconnectingMs / 1000).toFixed(1)} s)`;
  return `${reconnects}${dropped}`;
}

/** When a behavior happened: the start of its definitive clip, else of its first evidence clip. */
export function behaviorStartMs(s: ConversationSnapshot, d: BehaviorDetection): number | undefined {
  const uuid = d.definitive_clip_uuid ?? d.evidence_clip_uuids?.[0];
  return uuid ? s.clips.clips.get(uuid)?.start_ms : undefined;
}

/** Fit a line with ANSI styles to `width` visible characters. */
function fitStyled(line: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\x1b') {
      const end = line.indexOf('m', i);
      if (end === -1) break;
      out += line.slice(i, end + 1);
      i = end;
      continue;
    }
    if (visible === width - 1 && visibleLength(line.slice(i)) > 1) {
      out += '…\x1b[0m';
      return out;
    }
    out += line[i];
    visible++;
  }
  return out;
}

function visibleLength(text: string): number {
  return text.replace(/\x1b\[[0-9;]*m/g, '').length;
}
