import { defer, map, merge, Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { splitSession, type ParticipantRolePick, type ServerEvent, type OrderedMap } from 'svc-stream';
import { marbles } from '../operators/marbles.js';
import { ev } from './fixtures.js';

const roleNames = map((roles: OrderedMap<ParticipantRolePick>) => Object.fromEntries([...roles.entries()].map(([s, p]) => [s, p.name])));
const typeId = map((p: { conversation_type_uuid: string }) => p.conversation_type_uuid);

const events = {
  r: ev.role('1', 'Agent'),
  o: ev.topics('refund'),
  a: ev.role('2', 'Customer'),
  t: ev.type('support'),
  x: ev.topics('refund', 'billing'),
  d: ev.done(5_000),
  c: ev.clip('k', { text: 'hi' }),
};

describe('splitSession', () => {
  it('subscribes to the source exactly once; a subscriber arriving mid-session gets the current state at once', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-r-o-a-t-x-d|', events);
      const s = splitSession(source);
      expectObservable(s.currentRoles$.pipe(roleNames)).toBe('-r---a-t----|', {
        r: { 1: 'Agent' },
        a: { 1: 'Agent', 2: 'Customer' },
        t: {},
      });
      expectObservable(s.latestTopics$, '----^').toBe('----o----x--|', { o: ['refund'], x: ['refund', 'billing'] });
      // events$ does not replay: the late subscriber sees only later events.
      expectObservable(s.events$, '----^').toBe('-----a-t-x-d|', events);
      // Subscribed while the duration is still unknown: nothing until done.
      expectObservable(s.audioDuration$, '--------^').toBe('-----------d|', { d: 5_000 });
      expectObservable(s.conversationType$.pipe(typeId), '----------^').toBe('----------t-|', { t: 'support' });
      expectSubscriptions(source.subscriptions).toBe('^-----------!');
    });
  });

  it('unsubscribes from the source when the last subscriber leaves; a later subscriber starts a fresh fold', () => {
    marbles(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-r---a--o--r--|', events);
      const s = splitSession(source);
      expectObservable(s.currentRoles$.pipe(roleNames), '^--!').toBe('-r--', { r: { 1: 'Agent' } });
      expectObservable(s.events$, '--^----!').toBe('-----a--', events);
      // The roles {1, 2} of the first connection are gone: the new fold starts empty.
      expectObservable(s.currentRoles$.pipe(roleNames), '---------^').toBe('-----------r--|', { r: { 1: 'Agent' } });
      expectSubscriptions(source.subscriptions).toBe(['^------!', '---------^----!']);
    });
  });

  it('delivers completion to every stream; after it, late subscribers get the final state without a new subscription', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-r-o-d|', events);
      const s = splitSession(source);
      expectObservable(s.currentRoles$.pipe(roleNames)).toBe('-r----|', { r: { 1: 'Agent' } });
      expectObservable(s.latestTopics$).toBe('---o--|', { o: ['refund'] });
      expectObservable(s.latestTopics$, '--------^').toBe('--------(o|)', { o: ['refund'] });
      expectObservable(s.audioDuration$, '---------^').toBe('---------(d|)', { d: 5_000 });
      expectObservable(s.events$, '--------^').toBe('--------|');
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
  });

  it('delivers an error to every stream; a later subscriber gets the last state and the error, and no new subscription', () => {
    marbles(({ cold, expectObservable, expectSubscriptions }) => {
      const failure = new Error('closed 1011');
      const source = cold('-r-#', events, failure);
      const s = splitSession(source);
      // The role event reaches events$, currentRoles$ and snapshot$; the error reaches all.
      const withValue = new Set<Observable<unknown>>([s.events$, s.currentRoles$, s.snapshot$]);
      for (const stream$ of Object.values(s) as Observable<unknown>[]) {
        const expected = withValue.has(stream$) ? '-v-#' : '---#';
        expectObservable(stream$.pipe(map(() => 'v'))).toBe(expected, { v: 'v' }, failure);
      }
      // State outlives the failure: the last roles and the error at once, and the source
      // (a session) is not subscribed again.
      expectObservable(s.currentRoles$.pipe(roleNames), '-----^').toBe('-----(r#)', { r: { 1: 'Agent' } }, failure);
      expectObservable(s.snapshot$.pipe(map((snap) => snap.conversation.roles.size)), '-----^').toBe('-----(n#)', { n: 1 }, failure);
      expectObservable(s.events$, '-----^').toBe('-----#', undefined, failure);
      expectObservable(s.latestTopics$, '-----^').toBe('-----#', undefined, failure);
      expectSubscriptions(source.subscriptions).toBe(['^--!']);
    });
  });

  it('every named stream carries its part of the conversation', () => {
    const seen: Record<string, unknown[]> = {};
    const subject = new Subject<ServerEvent>();
    const s = splitSession(subject);
    const sub = merge(
      ...Object.entries(s).map(([name, stream$]) =>
        (stream$ as Observable<unknown>).pipe(map((v) => ((seen[name] ??= []).push(v), v))),
      ),
    ).subscribe();
    for (const event of [
      ev.partial('a', { text: 'he' }),
      ev.clip('a', { text: 'hello', emotion: null }),
      ev.update('a', { emotion: 'Happy' }),
      ev.role('1', 'Agent'),
      ev.type('support'),
      ev.behavior('greet', '1'),
      ev.topics('refund'),
      ev.sentiment('refund', '1', 0.5),
      ev.summary('ok'),
      ev.done(900),
    ]) {
      subject.next(event);
    }
    subject.complete();
    expect(sub.closed).toBe(true);
    const last = (name: string) => seen[name]?.at(-1);
    expect(seen['events$']).toHaveLength(10);
    expect((last('clipsWithUpdates$') as OrderedMap<{ emotion: string }>).toArray()).toEqual([{ clip_uuid: 'a', text: 'hello', emotion: 'Happy' }]);
    expect(seen['liveTranscript$']).toHaveLength(3);
    expect((last('currentRoles$') as OrderedMap<unknown>).size).toBe(0);
    expect(last('conversationType$')).toMatchObject({ conversation_type_uuid: 'support' });
    expect((last('behaviorDetections$') as OrderedMap<unknown>).size).toBe(1);
    expect(last('latestTopics$')).toEqual(['refund']);
    expect((last('topicSentiments$') as OrderedMap<unknown>).size).toBe(1);
    expect(last('latestSummary$')).toBe('ok');
    expect(last('audioDuration$')).toBe(900);
    expect(seen['snapshot$']).toHaveLength(10);
  });

  it('runs a synchronous source in full for the first subscriber; later ones get the final state', () => {
    const s = splitSession(defer(() => [ev.role('1', 'Agent'), ev.topics('refund'), ev.done(4_000)] as ServerEvent[]));
    const log: unknown[] = [];
    s.currentRoles$.subscribe({ next: (r) => log.push(['roles', r.size]), complete: () => log.push('roles done') });
    s.latestTopics$.subscribe({ next: (t) => log.push(['topics', t]), complete: () => log.push('topics done') });
    s.events$.subscribe({ next: (e) => log.push(['event', e.type]), complete: () => log.push('events done') });
    expect(log).toEqual([['roles', 1], 'roles done', ['topics', ['refund']], 'topics done', 'events done']);
  });

  it('shares one subscription between subscribers of every stream, with a live Subject source', () => {
    let subscriptions = 0;
    const subject = new Subject<ServerEvent>();
    const s = splitSession(defer(() => (subscriptions++, subject)));
    const subs = Object.values(s).map((stream$: Observable<unknown>) => stream$.subscribe());
    subject.next(ev.role('1', 'Agent'));
    const late: unknown[] = [];
    subs.push(s.currentRoles$.subscribe((roles) => late.push(roles.size)));
    expect(late).toEqual([1]);
    expect(subscriptions).toBe(1);
    expect(subject.observed).toBe(true);
    for (const sub of subs) sub.unsubscribe();
    expect(subject.observed).toBe(false);
  });
});
