// The one way the event unions are made: from a table of event schemas keyed by their `type`
// (SERVER_EVENT_SCHEMAS in events.ts), so the list of kinds is written once. Not exported by
// an entry.
import * as z from 'zod/mini';

/** The union, discriminated on `type`, of `schemas` (each keyed by its `type`), plus `extra`. */
export function eventUnion<S extends Readonly<Record<string, z.ZodMiniObject>>, E extends z.ZodMiniObject = never>(schemas: S, ...extra: E[]) {
  type Member = S[keyof S] | E;
  return z.discriminatedUnion('type', [...(Object.values(schemas) as Member[]), ...extra] as [Member, ...Member[]]);
}
