// A command's publisher (--publish) as a part of its service: nothing in flight, its figures in
// the registry (entries made, stored, not stored, unconfirmed, the backlog waiting for Redis, outages).
import type { Publisher } from '../publishing.js';
import type { CallServer } from '../service/lifecycle.js';

/** The publisher's families for the service's registry; it holds no call. */
export function publisherPart(publisher: Publisher): CallServer {
  const s = publisher.stats;
  const one = (value: number) => [{ value }];
  return {
    inFlight: 0,
    stopAccepting: () => undefined,
    endCalls: () => undefined,
    metrics: () => [
      { name: 'svc_stream_publish_entries_total', help: 'Entries made for Redis Streams (--publish): each session start, event, status and end.', type: 'counter', samples: () => one(s.entries) },
      { name: 'svc_stream_publish_stored_total', help: 'Entries Redis has stored.', type: 'counter', samples: () => one(s.published) },
      { name: 'svc_stream_publish_not_published_total', help: 'Entries known not stored (dropped past the bounds while Redis was away, refused, or never sent by the end).', type: 'counter', samples: () => one(s.notPublished) },
      { name: 'svc_stream_publish_unconfirmed_total', help: 'Entries sent whose answer never came before the close deadline: Redis may hold them or not (each is stored at most once).', type: 'counter', samples: () => one(s.unconfirmed) },
      { name: 'svc_stream_publish_streams_lost_total', help: 'Streams found gone (Redis restarted without persistence, or expired) and begun again.', type: 'counter', samples: () => one(s.streamsLost) },
      { name: 'svc_stream_publish_backlog_entries', help: 'Entries waiting for Redis now.', type: 'gauge', samples: () => one(s.pending) },
      { name: 'svc_stream_publish_outages_total', help: 'Times Redis became unreachable for the publisher.', type: 'counter', samples: () => one(s.outages) },
    ],
  };
}
