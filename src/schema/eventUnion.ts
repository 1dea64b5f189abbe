// The one way the event unions are made: from a table of event schemas keyed by their `type`
// (SERVER_EVENT_SCHEMAS in events.ts), so the list of kinds is written once. Not exported by
// an entry. Both arguments stay plain (no spread at the call), so a bundler drops an unused union.
import * as z from 'zod/mini';

type Table = Readonly<Record<string, z.ZodMiniObject>>;

/** The union, discriminated on `type`, of `schemas` with `changes` (each keyed by its `type`: a kind replaced, or one added). */
export function eventUnion<S extends Table, C extends Table>(schemas: S, changes: C) {
  return z.discriminatedUnion('type', Object.values({ ...schemas, ...changes }) as [S[keyof S] | C[keyof C], ...(S[keyof S] | C[keyof C])[]]);
}
