// The emulator's behavior preset catalogue (wire reference: list-presets). Configs may
// reference these as `preset:<identifier>`; an unknown identifier is rejected.
import type { Preset } from '../schema/batch.js';

export const PRESETS: readonly Preset[] = [
  {
    identifier: 'empathy',
    name: 'Empathy',
    short_description: 'The speaker acknowledges the other party’s feelings.',
    detailed_description: 'Detected when a speaker explicitly recognises frustration, worry or inconvenience, for example by apologising or saying they understand.',
  },
  {
    identifier: 'frustration',
    name: 'Frustration',
    short_description: 'The speaker expresses frustration or annoyance.',
    detailed_description: 'Detected on complaints about repeated problems, raised emotion, or statements such as "I am fed up".',
  },
  {
    identifier: 'greeting',
    name: 'Proper greeting',
    short_description: 'The call opens with a greeting that names the organization.',
    detailed_description: 'Detected when the first turn of the agent greets the caller and names the organization or the agent.',
  },
  {
    identifier: 'resolution-offered',
    name: 'Resolution offered',
    short_description: 'A concrete resolution is offered to the customer.',
    detailed_description: 'Detected when the agent commits to an action that resolves the issue, such as a refund or a replacement.',
  },
  {
    identifier: 'identity-verification',
    name: 'Identity verification',
    short_description: 'The agent verifies the caller’s identity.',
    detailed_description: 'Detected when the agent asks for and receives identifying details before discussing the account.',
  },
];

export function findPreset(identifier: string): Preset | undefined {
  return PRESETS.find((p) => p.identifier === identifier);
}
