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
  /**
   * Every clip UUID delivered so far, a partial's as well as a clip's, by any segment: a later
   * segment's UUID that equals one of them names another clip and is replaced.
   */
  private readonly delivered = new Set<string>();
  /** This segment's UUIDs as delivered: server uuid → the one delivered (itself, a carried partial's, or a replacement). */
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

  /** Whether an utterance is in progress: a partial without its clip, or one carried from a break that this segment has not reached again. */
  get inProgress(): boolean {
    return this.open.size > 0 || this.carried.length > 0;
  }

  /**
   * Start the next segment at `offsetMs` on the stream's axis. Returns the UUIDs of the
   * utterances in progress (partials delivered, no clip yet) that it starts too late to
   * analyse again, so that no session will finish them (none when it starts at the commit point).
   */
  nextSegment(offsetMs: number): string[] {
    this.remap.clear();
    this.dropped.clear();
    // An utterance in progress at the break is analysed again: its clip takes the partial's UUID.
    // One carried to the segment that just ended and not reached by it (it failed first, as
    // it opened) waits on for this one: otherwise its clip would come under a new UUID and
    // its partial stay unfinished in a consumer's transcript (issue 45). Only while this
    // segment starts before it: one that starts after it cannot analyse it from its start.
    const unfinished: string[] = [];
    const carried: Array<{ readonly start: number; readonly delivered: string }> = [];
    for (const c of [...this.carried, ...this.open.values()]) {
      if (c.start >= offsetMs - CARRY_MS) carried.push(c);
      else unfinished.push(c.delivered);
    }
    this.carried = carried;
    this.open.clear();
    this.segment++;
    this.offsetMs = offsetMs;
    this.overlap = this.recent.filter((s) => s.end > offsetMs);
    this.recent = this.overlap.slice();
    return unfinished;
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
   * was in progress at the break (same start, within {@link CARRY_MS}); a fresh one when the
   * server's UUID was already delivered for another clip; else the server's.
   *
   * "Already delivered" must cover every UUID a consumer holds, not only earlier segments'
   * clips (issue 45): a server that derives UUIDs from time in the session (the emulator) can
   * give a later clip of this segment the UUID a carried partial had in the segment before,
   * which this segment has just given to that partial's clip; or an earlier segment's
   * partial's, whose clip came under another UUID. Delivered as it is, the later clip would
   * replace the earlier one in a consumer's state (which is keyed by UUID), and that clip
   * would vanish from the transcript.
   */
  private uuid(raw: string, start?: number): string {
    if (this.segment === 0) {
      this.delivered.add(raw);
      return raw;
    }
    let mapped = this.remap.get(raw);
    if (mapped !== undefined) return mapped;
    const i = start === undefined ? -1 : this.carried.findIndex((c) => Math.abs(c.start - start) <= CARRY_MS);
    if (i >= 0) {
      mapped = this.carried[i]!.delivered;
      this.carried.splice(i, 1);
    } else {
      mapped = this.delivered.has(raw) ? segmentUuid(raw, this.segment) : raw;
    }
    this.remap.set(raw, mapped);
    this.delivered.add(mapped);
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
