// BatchConfig, the first text frame of a streaming session (wire reference). Validated
// locally so an invalid config is refused before connecting, naming the offending path.
import { z } from 'zod';

/**
 * Any 8-4-4-4-12 hex form. The wire sets no RFC version or variant rule (`z.uuid()` does, and
 * refused `aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa`), so neither does the client nor the emulator.
 */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const Uuid = z.string().regex(UUID_PATTERN, { message: 'must be a UUID (8-4-4-4-12 hex digits)' });
const Text = z.string();

/**
 * Validates one entry of `BatchConfig.conversation_types` (§2.5): a candidate conversation
 * type with a UUID, a name and optional descriptions. Unknown keys are refused.
 * Infers {@link ConversationTypeDef}.
 */
export const ConversationTypeDefSchema = z.strictObject({
  conversation_type_uuid: Uuid,
  name: Text.min(1),
  short_description: Text.optional(),
  detailed_description: Text.optional(),
});
/** A candidate conversation type in the config frame (`conversation_types`, `default_conversation_type`). */
export type ConversationTypeDef = z.infer<typeof ConversationTypeDefSchema>;

/**
 * Validates one entry of `BatchConfig.participant_roles` (§2.5): a candidate participant
 * role, optionally limited to some conversation types. Unknown keys are refused.
 * Infers {@link ParticipantRoleDef}.
 */
export const ParticipantRoleDefSchema = z.strictObject({
  participant_role_uuid: Uuid,
  name: Text.min(1),
  short_description: Text.optional(),
  detailed_description: Text.optional(),
  applies_to_conversation_type_uuids: z.array(Uuid).optional(),
});
/** A candidate participant role in the config frame (`participant_roles`, `default_participant_role`). */
export type ParticipantRoleDef = z.infer<typeof ParticipantRoleDefSchema>;

/**
 * Validates a custom behavior definition in `BatchConfig.behaviors` (§2.5): UUID, name,
 * descriptions, and optional conversation-type / role filters. Unknown keys are refused.
 * Infers {@link BehaviorDef}.
 */
export const BehaviorDefSchema = z.strictObject({
  behavior_uuid: Uuid,
  name: Text.min(1),
  short_description: Text.optional(),
  detailed_description: Text.optional(),
  applies_to_conversation_type_uuids: z.array(Uuid).optional(),
  applies_to_participant_role_uuids: z.array(Uuid).optional(),
});
/** A custom behavior the server should detect, in the config frame's `behaviors` list. */
export type BehaviorDef = z.infer<typeof BehaviorDefSchema>;

/**
 * A string form or an object form, chosen by the input's type. A plain `z.union` reports a
 * type error inside the object (a bad `behavior_uuid`, a missing `term`) at the union itself,
 * so the path stopped at `behaviors.0`; choosing the branch first keeps the full path.
 */
function stringOrObject<S extends z.ZodType<string>, O extends z.ZodType<object>>(str: S, obj: O) {
  return z.custom<z.output<S> | z.output<O>>().superRefine((value, ctx) => {
    const r = (typeof value === 'string' ? str : obj).safeParse(value);
    if (r.success) return;
    for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path, input: value });
  });
}

/** `preset:<identifier>`: a behavior from the preset catalogue. */
export const PresetRefSchema = z
  .string()
  .regex(/^preset:[A-Za-z0-9][A-Za-z0-9_.-]*$/, { message: "a behavior string must be 'preset:<identifier>'" });

/**
 * Validates one entry of `BatchConfig.behaviors`: either a `preset:<identifier>` string
 * (§2.5) or a {@link BehaviorDef}; errors keep the full path (`behaviors.0.behavior_uuid`).
 */
export const BehaviorSchema = stringOrObject(PresetRefSchema, BehaviorDefSchema);

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** Most entries `stt.custom_terms` may hold (1000). */
export const MAX_CUSTOM_TERMS = 1000;
/** `stt.custom_terms` serialized as JSON must stay under this many characters (8000). */
export const MAX_CUSTOM_TERMS_JSON_CHARS = 8000;

/**
 * Validates one `stt.custom_terms` entry: a non-empty string, or `{ term, definition?,
 * pronunciations? }` (definition ≤ 256 chars, ≤ 16 printable-ASCII pronunciations of
 * ≤ 128 chars). Infers {@link CustomTerm}.
 */
export const CustomTermSchema = stringOrObject(
  z.string().min(1, { message: 'a custom term must not be empty' }),
  z.strictObject({
    term: z.string().min(1, { message: 'term must not be empty' }),
    definition: z.string().max(256, { message: 'definition must be at most 256 characters' }).optional(),
    pronunciations: z
      .array(
        z
          .string()
          .max(128, { message: 'a pronunciation must be at most 128 characters' })
          .regex(PRINTABLE_ASCII, { message: 'a pronunciation must be printable ASCII' }),
      )
      .max(16, { message: 'at most 16 pronunciations' })
      .optional(),
  }),
);
/** A vocabulary hint for transcription: a term string or `{ term, definition?, pronunciations? }`. */
export type CustomTerm = z.infer<typeof CustomTermSchema>;

/**
 * Validates `stt.custom_terms`: null, or at most {@link MAX_CUSTOM_TERMS} {@link CustomTerm}s
 * whose JSON stays under {@link MAX_CUSTOM_TERMS_JSON_CHARS} characters.
 */
export const CustomTermsSchema = z
  .array(CustomTermSchema)
  .max(MAX_CUSTOM_TERMS, { message: `at most ${MAX_CUSTOM_TERMS} custom terms` })
  .refine((terms) => JSON.stringify(terms).length < MAX_CUSTOM_TERMS_JSON_CHARS, {
    message: `custom terms serialized as JSON must total under ${MAX_CUSTOM_TERMS_JSON_CHARS} characters`,
  })
  .nullable();

/**
 * Validates `BatchConfig.stt` (§2.5): diarization, the emotion / accent / deepfake signals
 * that fill the matching clip fields, PII/PHI tagging, an ISO 639-1 `language` hint and
 * `custom_terms`. Unknown keys are refused. Infers {@link SttOptions}.
 */
export const SttOptionsSchema = z.strictObject({
  speaker_diarization: z.boolean().optional(),
  emotion_signal: z.boolean().optional(),
  accent_signal: z.boolean().optional(),
  deepfake_signal: z.boolean().optional(),
  pii_phi_tagging: z.boolean().optional(),
  language: z
    .string()
    .regex(/^[a-z]{2}$/, { message: 'language must be an ISO 639-1 code such as "en"' })
    .nullable()
    .optional(),
  custom_terms: CustomTermsSchema.optional(),
});
/** Speech-to-text options of the config frame (`stt`, §2.5). */
export type SttOptions = z.infer<typeof SttOptionsSchema>;

/**
 * The analysis configuration. Every key is optional; unknown keys are refused, so a typo
 * is caught here instead of being ignored by the service.
 */
export const BatchConfigSchema = z.strictObject({
  conversation_types: z.array(ConversationTypeDefSchema).optional(),
  participant_roles: z.array(ParticipantRoleDefSchema).optional(),
  behaviors: z.array(BehaviorSchema).optional(),
  stt: SttOptionsSchema.optional(),
  produce_topics: z.boolean().optional(),
  produce_topic_sentiments: z.boolean().optional(),
  produce_summary: z.boolean().optional(),
  default_conversation_type: ConversationTypeDefSchema.nullable().optional(),
  default_participant_role: ParticipantRoleDefSchema.nullable().optional(),
});
/** The analysis configuration sent as the config frame of a streaming session (§3, §4.3) or the `config` field of a batch request. */
export type BatchConfig = z.infer<typeof BatchConfigSchema>;

/** What the config frame carries: the literal `default` or a BatchConfig. */
export type SessionConfig = 'default' | BatchConfig;
