// Genesys Cloud AudioHook's wire (protocol version 2) as zod schemas: what a client sends,
// checked as the public reference implementation checks it, and what a server sends back.
// Tolerant where the protocol may grow (extra fields, media formats not taken). The telephony
// entry's AudioHook server reads them; 'svc-stream/schema' exports them.
import { z } from 'zod';

/** The protocol version every message carries. */
export const AUDIOHOOK_VERSION = '2';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** A position or a length: ISO 8601 seconds, `PT12.34S`. */
const DURATION = /^PT(?:\d+(?:\.\d+)?|\.\d+)S$/;

/** The null UUID: a connection probe's conversation (Genesys checks the server answers). */
export const NULL_UUID = '00000000-0000-0000-0000-000000000000';

const uuid = z.string().regex(UUID);
const duration = z.string().regex(DURATION);
const seq = z.int().min(0);

/** Validates what every AudioHook client message carries: `version` 2, the session's `id`, `type`, `seq`, `serverseq`, `position`, `parameters`. */
export const AudioHookClientBaseSchema = z.looseObject({
  version: z.literal(AUDIOHOOK_VERSION),
  id: uuid,
  type: z.string(),
  seq,
  serverseq: seq,
  position: duration,
  parameters: z.looseObject({}),
});
/** What every AudioHook client message carries. */
export type AudioHookClientBase = z.infer<typeof AudioHookClientBaseSchema>;

/** The sides of a call an AudioHook channel carries: the customer's (`external`) and the agent's (`internal`). */
export type AudioHookChannel = 'external' | 'internal';

/** Validates one media format of an AudioHook `open` (and `opened`). Infers {@link AudioHookMedia}. */
export const AudioHookMediaSchema = z.looseObject({
  type: z.string(),
  format: z.string(),
  channels: z.array(z.string()),
  rate: z.number(),
});
/** One media format offered in `open` (and the one chosen, echoed in `opened`): `type` `audio`, `format` `PCMU` or `L16`, `channels` (`external`, `internal`), `rate` 8000. */
export type AudioHookMedia = z.infer<typeof AudioHookMediaSchema>;

/** Validates an AudioHook `open`'s participant. Infers {@link AudioHookParticipant}. */
export const AudioHookParticipantSchema = z.looseObject({
  id: z.string(),
  ani: z.string(),
  aniName: z.string(),
  dnis: z.string(),
});
/** The customer's side of the call, as Genesys names it: `id`, `ani` (the caller's number), `aniName`, `dnis` (the number called). */
export type AudioHookParticipant = z.infer<typeof AudioHookParticipantSchema>;

/** Validates the parameters of an AudioHook `open`. Infers {@link AudioHookOpenParameters}. */
export const AudioHookOpenParametersSchema = z.looseObject({
  organizationId: uuid,
  conversationId: uuid,
  participant: AudioHookParticipantSchema,
  media: z.array(AudioHookMediaSchema),
  language: z.optional(z.string()),
  supportedLanguages: z.optional(z.boolean()),
  continuedSessions: z.optional(z.array(z.looseObject({ id: uuid, serverseq: seq, clientseq: seq }))),
  customConfig: z.optional(z.looseObject({})),
});
/**
 * The parameters of an AudioHook `open`: the organization and conversation, the participant, the
 * media offered, the language, the integration's `customConfig`, and after a reconnect the
 * sessions it continues (`continuedSessions`).
 */
export type AudioHookOpenParameters = z.infer<typeof AudioHookOpenParametersSchema>;

/** The parameters of each client message, by type. */
export const AUDIOHOOK_CLIENT_PARAMETERS = {
  open: AudioHookOpenParametersSchema,
  close: z.looseObject({ reason: z.string() }),
  discarded: z.looseObject({ start: duration, discarded: duration }),
  error: z.looseObject({ code: z.int(), message: z.string(), retryAfter: z.optional(duration) }),
  paused: z.looseObject({}),
  ping: z.looseObject({ rtt: z.optional(duration) }),
  resumed: z.looseObject({ start: duration, discarded: duration }),
  update: z.looseObject({ language: z.optional(z.string()) }),
} as const;

/** The client's message types. */
export type AudioHookClientType = keyof typeof AUDIOHOOK_CLIENT_PARAMETERS;

/** Whether `type` is one of the client messages. */
export function isClientType(type: string): type is AudioHookClientType {
  return Object.prototype.hasOwnProperty.call(AUDIOHOOK_CLIENT_PARAMETERS, type);
}

/** The server's message types. */
export type AudioHookServerType = 'opened' | 'closed' | 'disconnect' | 'event' | 'pause' | 'pong' | 'reconnect' | 'resume' | 'updated';

/** A message the server sends. */
export interface AudioHookServerMessage {
  readonly version: typeof AUDIOHOOK_VERSION;
  readonly id: string;
  readonly type: AudioHookServerType;
  readonly seq: number;
  readonly clientseq: number;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** A duration's seconds (`PT1.5S` → 1.5). */
export function durationSeconds(d: string): number {
  return Number(d.slice(2, -1));
}

/** Seconds as a duration (`PT1.5S`), to the millisecond. */
export function secondsDuration(s: number): string {
  return `PT${Math.round(s * 1000) / 1000}S`;
}
