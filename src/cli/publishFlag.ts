// `--publish URL` (or SVC_PUBLISH_URL) for every command that runs sessions, and `--from URL`
// for the relay and the dashboard: live events through Redis Streams (docs/fleet.md). Redis
// code loads only when one is given.
import type { Observable } from 'rxjs';
import { InputError } from '../errors/index.js';
import type { Publisher, PublishReport, PublishStats } from '../publishing.js';
import type { ServerEvent } from '../schema/events.js';
import type { SessionState } from '../schema/sessionState.js';
import type { CliIo } from './command.js';
import { option } from './options.js';

const redisUrl = (raw: string | undefined, flag: string): string | undefined => {
  if (raw === undefined || raw === '') return undefined;
  if (!/^rediss?:\/\//.test(raw)) throw new InputError('invalid_argument', `${flag} expects a redis:// or rediss:// URL, got '${raw.replace(/\/\/[^@/]*@/, '//***@')}'`, { path: flag.replace(/^-+/, '') });
  return raw;
};

/** `--publish URL`, for the one option parser (options.ts). */
export const PUBLISH_OPTION = {
  publish: option.custom('URL', "publish each session's events to Redis Streams for relays anywhere in the\nfleet to serve (relay --from, dashboard --from); default SVC_PUBLISH_URL", redisUrl),
} as const;

/** `--from URL`, for the relay and the dashboard. */
export function fromOption(help: string): { readonly from: ReturnType<typeof option.custom<string | undefined>> } {
  return { from: option.custom('URL', help, redisUrl) };
}

/** What of `entries` Redis may not hold: `8 of 14 entries not published`, and the unconfirmed ones (sent, never answered: Redis may hold them). */
function unstored(s: Pick<PublishStats, 'entries' | 'notPublished' | 'unconfirmed'>): string {
  const parts: string[] = [];
  if (s.notPublished > 0) parts.push(`${s.notPublished} of ${s.entries} entries not published`);
  if (s.unconfirmed > 0) parts.push(`${s.unconfirmed} of ${s.entries} unconfirmed (sent, Redis did not answer before the close deadline: it may hold them)`);
  return parts.join(', ');
}

/** The publisher of a command, or none. */
export interface CommandPublisher {
  readonly publisher: Publisher | undefined;
  /** The session's events, published under `id` (with its statuses, from `state$`) when there is a publisher. */
  session(id: string, title: string, events$: Observable<ServerEvent>, state$: Observable<SessionState>): Observable<ServerEvent>;
  /** A session's report, said on stderr when something was not published. */
  report(report: PublishReport): void;
  /** Close it (waiting a few seconds for what is pending) and say what could not be published. */
  close(): Promise<void>;
}

/**
 * The publisher `--publish` or SVC_PUBLISH_URL names; nothing (and no Redis code) without
 * either. Redis being unreachable is said on stderr once per outage; the sessions go on.
 */
export async function commandPublisher(flag: string | undefined, io: CliIo): Promise<CommandPublisher> {
  const url = flag ?? redisUrl(io.env['SVC_PUBLISH_URL'], 'SVC_PUBLISH_URL');
  if (url === undefined) return { publisher: undefined, session: (_id, _title, events$) => events$, report: () => undefined, close: async () => undefined };
  const { createPublisher } = await import('../fleet/publisher.js');
  const publisher = await createPublisher({ url, onRedisError: (e) => io.stderr.write(`svc-stream: publish: ${e.message.split('\n')[0]}; the sessions go on, their entries wait\n`) });
  io.stderr.write(`svc-stream: publishing to ${publisher.target}\n`);
  let reported = 0;
  const report = (r: PublishReport): void => {
    const missing = r.notPublished + r.unconfirmed;
    reported += missing;
    if (missing > 0) io.stderr.write(`svc-stream: publish: session ${r.id}: ${unstored(r)}${r.error ? ` (${r.error.code}: ${r.error.message.split('\n')[0]})` : ''}\n`);
  };
  return {
    publisher,
    report,
    session: (id, title, events$, state$) => publisher.publish(events$, { id, title, state$, onReport: report }),
    async close() {
      const stats = await publisher.close();
      // What no session's report said (a session still running when the command stopped).
      if (stats.notPublished + stats.unconfirmed > reported) io.stderr.write(`svc-stream: publish: in all, ${unstored(stats)} (${publisher.target})\n`);
    },
  };
}
