// One time axis over the sessions (segments) of a reconnected stream: each segment's events
// re-based onto the stream's audio position, tagged with their segment, clips of the
// re-analysed overlap that duplicate a finalized clip dropped, and the commit point (where a
// new segment must resume so nothing unfinished is lost) kept up to date.
import { createHash } from 'node:crypto';
import type { ServerEvent } from '../schema/events.js';

/**
 * An event as a session delivers it: a {@link ServerEvent}, plus, after a reconnect, the
 * `segment` it came from (1 for the first reconnected session, 2 for the next…; absent on the
 * first session's events). Times of a segment's events (`start_ms`, `end_ms`, `done.duration_ms`)
 * are already re-based onto the whole stream's audio position.
 */
export type SessionEvent = ServerEvent & { readonly segment?: number | undefined };

/** A finalized clip's span on the stream's axis. */
interface Span {
  readonly start: number;
  readonly end: number;
}

/** How close the re-analysed start of an utterance in progress must be to its partial's start to be the same utterance. */
const CARRY_MS = 250;

/** Overlap needed to call a re-analysed clip a duplicate: more than half of its own span. */
const DUPLICATE_SHARE = 0.5;

/**
 * The time axis of a stream split into segments. Mutable by design (one per stream, fed every
 * event in order), with no I/O: `deliver` is a function of what came before.
 */
export class SegmentClock {
  /** The segment whose events arrive now (0: the first session). */
  segment = 0;
  /** Where the current segment starts on the stream's axis, in ms. */
  offsetMs = 0;
  /** Re-analysed clips dropped as duplicates of finalized ones, over the stream. */
  duplicates = 0;
  /** End of the latest finalized clip on the stream's axis. */
  private finalizedEnd = 0;
  /** Partials of the current segment without their clip yet: server uuid → start on the stream's axis and the uuid delivered. */
  private readonly open = new Map<string, { readonly start: number; readonly delivered: string }>();
  /** Partials the previous segment left open (its utterance in progress), to be finalized by the new one. */
  private carried: Array<{ readonly start: number; readonly delivered: string }> = [];
  /** Finalized spans of earlier segments that reach past the current segment's start. */
  private overlap: Span[] = [];
  /** Finalized spans that may still overlap a later segment (kept short: only those near the end). */
  private recent: Span[] = [];
  /** Clip UUIDs delivered by earlier segments, so a new segment's reused UUID is told apart. */
  private readonly earlierUuids = new Set<string>();
  private readonly segmentUuids = new Set<string>();
  /** This segment's UUIDs that collided with an earlier segment's: uuid → the one delivered. */
  private readonly remap = new Map<string, string>();
  /** This segment's clips dropped as duplicates (their partials and updates go too). */
  private readonly dropped = new Set<string>();

  /**
   * Where a new segment must start so that nothing unfinished is lost: the end of the last
   * finalized clip, or the start of an utterance still in progress if it began earlier.
   */
  get commitMs(): number {
    let c = this.finalizedEnd;
    for (const o of this.open.values()) if (o.start < c) c = o.start;
    return c;
  }

  /** Start the next segment at `offsetMs` on the stream's axis. */
  nextSegment(offsetMs: number): void {
    for (const u of this.segmentUuids) this.earlierUuids.add(u);
    this.segmentUuids.clear();
    this.remap.clear();
    this.dropped.clear();
    // An utterance in progress at the break is analysed again: its clip takes the partial's UUID.
    this.carried = [...this.open.values()];
    this.open.clear();
    this.segment++;
    this.offsetMs = offsetMs;
    this.overlap = this.recent.filter((s) => s.end > offsetMs);
    this.recent = this.overlap.slice();
  }

  /**
   * The event to deliver for one event of the current segment (times re-based, `segment`
   * set after a reconnect, UUIDs kept apart), or undefined when it duplicates what an earlier
   * segment finalized.
   */
  deliver(event: ServerEvent): SessionEvent | undefined {
    const seg = this.segment;
    const off = this.offsetMs;
    switch (event.type) {
      case 'partial_clip': {
        const p = event.partial_clip;
        if (this.dropped.has(p.clip_uuid)) return undefined;
        const start = p.start_ms === undefined ? undefined : p.start_ms + off;
        if (start !== undefined && this.insideFinalized(start)) {
          this.dropped.add(p.clip_uuid);
          return undefined;
        }
        const uuid = this.uuid(p.clip_uuid, start);
        if (start !== undefined) this.open.set(p.clip_uuid, { start, delivered: uuid });
        if (seg === 0) return event;
        const end = p.end_ms === undefined || p.end_ms === null ? p.end_ms : p.end_ms + off;
        return { ...event, partial_clip: { ...p, clip_uuid: uuid, ...(start !== undefined ? { start_ms: start } : {}), ...(end !== undefined ? { end_ms: end } : {}) }, segment: seg };
      }
      case 'clip': {
        const c = event.clip;
        if (this.dropped.has(c.clip_uuid)) {
          this.open.delete(c.clip_uuid);
          this.duplicates++;
          return undefined;
        }
        const start = c.start_ms === undefined ? undefined : c.start_ms + off;
        const uuid = this.uuid(c.clip_uuid, start);
        const end = start !== undefined && c.duration_ms !== undefined ? start + c.duration_ms : undefined;
        this.open.delete(c.clip_uuid);
        if (start !== undefined && end !== undefined) {
          if (this.duplicatesFinalized(start, end)) {
            this.dropped.add(c.clip_uuid);
            this.duplicates++;
            return undefined;
          }
          if (end > this.finalizedEnd) this.finalizedEnd = end;
          this.remember({ start, end });
        }
        this.segmentUuids.add(uuid);
        if (seg === 0) return event;
        return { ...event, clip: { ...c, clip_uuid: uuid, ...(start !== undefined ? { start_ms: start } : {}) }, segment: seg };
      }
      case 'clip_update': {
        const u = event.clip_update;
        if (this.dropped.has(u.clip_uuid)) return undefined;
        if (seg === 0) return event;
        return { ...event, clip_update: { ...u, clip_uuid: this.uuid(u.clip_uuid) }, segment: seg };
      }
      case 'behavior_detection': {
        if (seg === 0) return event;
        const d = event.detection;
        return {
          ...event,
          detection: {
            ...d,
            ...(d.evidence_clip_uuids ? { evidence_clip_uuids: d.evidence_clip_uuids.map((x) => this.uuid(x)) } : {}),
            ...(typeof d.definitive_clip_uuid === 'string' ? { definitive_clip_uuid: this.uuid(d.definitive_clip_uuid) } : {}),
          },
          segment: seg,
        };
      }
      case 'done':
        if (seg === 0) return event;
        return { ...event, duration_ms: event.duration_ms + off, segment: seg };
      default:
        return seg === 0 ? event : { ...event, segment: seg };
    }
  }

  /**
   * A UUID of this segment as delivered: the partial's UUID when this is the utterance that
   * was in progress at the break (same start, within {@link CARRY_MS}); a fresh one when an
   * earlier segment already used this UUID; else the server's.
   */
  private uuid(raw: string, start?: number): string {
    if (this.segment === 0) return raw;
    let mapped = this.remap.get(raw);
    if (mapped !== undefined) return mapped;
    const i = start === undefined ? -1 : this.carried.findIndex((c) => Math.abs(c.start - start) <= CARRY_MS);
    if (i >= 0) {
      mapped = this.carried[i]!.delivered;
      this.carried.splice(i, 1);
    } else if (this.earlierUuids.has(raw)) {
      mapped = segmentUuid(raw, this.segment);
    } else {
      return raw;
    }
    this.remap.set(raw, mapped);
    return mapped;
  }

  private insideFinalized(ms: number): boolean {
    return this.overlap.some((s) => ms >= s.start && ms < s.end - 1);
  }

  private duplicatesFinalized(start: number, end: number): boolean {
    const len = Math.max(1, end - start);
    for (const s of this.overlap) {
      const shared = Math.min(end, s.end) - Math.max(start, s.start);
      if (shared > DUPLICATE_SHARE * len) return true;
    }
    return false;
  }

  /** Keep the spans that could still overlap a later segment: those of the last few seconds. */
  private remember(span: Span): void {
    this.recent.push(span);
    if (this.recent.length > 64) this.recent = this.recent.slice(-32);
  }
}

/** A stable UUID for a server UUID reused by a later segment (segment-scoped, same shape). */
function segmentUuid(raw: string, segment: number): string {
  const h = createHash('sha1').update(`${segment}:${raw}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
