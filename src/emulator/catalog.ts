// The emulator's built-in conversation types and participant roles (used when a config
// omits them, wire reference), and the deterministic UUIDs the engine gives what it makes.
import { createHash } from 'node:crypto';
import type { ConversationTypeDef, ParticipantRoleDef } from '../schema/config.js';

/** A stable UUID (version 5 layout) derived from `seed`: same input, same UUID, every run. */
export function stableUuid(seed: string): string {
  const h = createHash('sha1').update(`svc-emulator:${seed}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

const type = (name: string, short: string): ConversationTypeDef => ({
  conversation_type_uuid: stableUuid(`conversation_type:${name}`),
  name,
  short_description: short,
  detailed_description: short,
});

/** Candidates when the config omits `conversation_types`. */
export const BUILTIN_CONVERSATION_TYPES: readonly ConversationTypeDef[] = [
  type('Customer support', 'A customer contacts support about a problem with a product, service or account.'),
  type('Billing dispute', 'A customer disputes a charge, fee or invoice.'),
  type('Sales', 'A seller presents or negotiates an offer with a prospect.'),
  type('Technical support', 'A caller gets help with a technical fault.'),
  type('Meeting', 'Several participants discuss an agenda.'),
];

const role = (name: string, short: string): ParticipantRoleDef => ({
  participant_role_uuid: stableUuid(`participant_role:${name}`),
  name,
  short_description: short,
  detailed_description: short,
});

/** Candidates when the config omits `participant_roles`; they apply to every type. */
export const BUILTIN_PARTICIPANT_ROLES: readonly ParticipantRoleDef[] = [
  role('Agent', 'Represents the organization.'),
  role('Customer', 'Contacts the organization as a customer.'),
  role('Participant', 'Takes part without a more specific role.'),
];

/** The built-in fallback type (`default_conversation_type` omitted). */
export const BUILTIN_DEFAULT_CONVERSATION_TYPE: ConversationTypeDef = type('Other', 'No listed type fits.');
/** The built-in fallback role (`default_participant_role` omitted). */
export const BUILTIN_DEFAULT_PARTICIPANT_ROLE: ParticipantRoleDef = role('Participant', 'Takes part without a more specific role.');
