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

export const ConversationTypeDefSchema = z.strictObject({
  conversation_type_uuid: Uuid,
  name: Text.min(1),
  short_description: Text.optional(),
  detailed_description: Text.optional(),
});
export type ConversationTypeDef = z.infer<typeof ConversationTypeDefSchema>;

export const ParticipantRoleDefSchema = z.strictObject({
  participant_role_uuid: Uuid,
  name: Text.min(1),
  short_description: Text.optional(),
  detailed_description: Text.optional(),
  applies_to_conversation_type_uuids: z.array(Uuid).optional(),
});
export type ParticipantRoleDef = z.infer<typeof ParticipantRoleDefSchema>;

export const BehaviorDefSchema = z.strictObject({
  behavior_uuid: Uuid,
  name: Text.min(1),
  short_description: Text.optional(),
  detailed_description: Text.optional(),
  applies_to_conversation_type_uuids: z.array(Uuid).optional(),
  applies_to_participant_role_uuids: z.array(Uuid).optional(),
});
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

export const BehaviorSchema = stringOrObject(PresetRefSchema, BehaviorDefSchema);

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
export const MAX_CUSTOM_TERMS = 1000;
export const MAX_CUSTOM_TERMS_JSON_CHARS = 8000;

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
export type CustomTerm = z.infer<typeof CustomTermSchema>;

export const CustomTermsSchema = z
  .array(CustomTermSchema)
  .max(MAX_CUSTOM_TERMS, { message: `at most ${MAX_CUSTOM_TERMS} custom terms` })
  .refine((terms) => JSON.stringify(terms).length < MAX_CUSTOM_TERMS_JSON_CHARS, {
    message: `custom terms serialized as JSON must total under ${MAX_CUSTOM_TERMS_JSON_CHARS} characters`,
  })
  .nullable();

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
export type BatchConfig = z.infer<typeof BatchConfigSchema>;

/** What the config frame carries: the literal `default` or a BatchConfig. */
export type SessionConfig = 'default' | BatchConfig;
