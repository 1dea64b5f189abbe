// The fold every state operator shares: scan with a pure reducer, emit the selected part only
// when it changes by reference; selectChanged for a stream of states.
import { of, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { foldState, isSet, selectChanged } from '../../src/internal/fold.js';
import type { ServerEvent } from '../../src/schema/events.js';

const summary = (text: string | null): ServerEvent => ({ type: 'summary', text });

describe('foldState', () => {
  it('emits the selected part when, and only when, it changes; the initial part never', () => {
    type S = { summary: string | null; n: number };
    const reducer = (s: S, e: ServerEvent): S => (e.type === 'summary' ? (e.text === s.summary ? { ...s, n: s.n + 1 } : { summary: e.text, n: s.n + 1 }) : s);
    const out: Array<string | null> = [];
    of(summary('a'), summary('a'), { type: 'topics', topics: [] } as ServerEvent, summary('b'))
      .pipe(foldState(reducer, { summary: null, n: 0 }, (s) => s.summary))
      .subscribe((v) => out.push(v));
    expect(out).toEqual(['a', 'b']);
  });

  it('passes errors and completion through, and unsubscribes its source', () => {
    const source = new Subject<ServerEvent>();
    const seen: string[] = [];
    const sub = source.pipe(foldState((s: number) => s + 1, 0, (s) => s)).subscribe({ next: (v) => seen.push(`next ${v}`), error: (e: unknown) => seen.push(`error ${String(e)}`) });
    source.next(summary(null));
    source.error('boom');
    expect(seen).toEqual(['next 1', 'error boom']);
    expect(sub.closed).toBe(true);
    expect(source.observed).toBe(false);
  });
});

describe('selectChanged and isSet', () => {
  it('selectChanged skips the initial part and repeats of the same reference', () => {
    const a = { v: 1 };
    const b = { v: 2 };
    const out: unknown[] = [];
    of({ p: a }, { p: a }, { p: b }).pipe(selectChanged((s: { p: object }) => s.p, { p: a })).subscribe((v) => out.push(v));
    expect(out).toEqual([b]);
  });

  it('isSet tells a value from null', () => {
    expect([0, '', null, 'x'].filter(isSet)).toEqual([0, '', 'x']);
  });
});
