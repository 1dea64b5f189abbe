// A small, deterministic PII tagger for the PII/PHI redaction streaming emulator: it finds
// what simple patterns can find in transcript text (numbers, spelled digit runs, emails,
// phone numbers, self-introduced names) and nothing else.

export interface PiiEntity {
  readonly label: 'EMAIL' | 'PHONE_NUMBER' | 'NUMBER' | 'PERSON_NAME';
  /** The original text of the entity. */
  readonly text: string;
  /** Character offsets in the original text. */
  readonly start: number;
  readonly end: number;
}

const DIGIT_WORDS = '(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)';
const PATTERNS: ReadonlyArray<{ label: PiiEntity['label']; re: RegExp; group?: number }> = [
  { label: 'EMAIL', re: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g },
  { label: 'PHONE_NUMBER', re: /\+?\d[\d\s().-]{7,}\d/g },
  { label: 'NUMBER', re: /\b\d{3,}\b/g },
  { label: 'NUMBER', re: new RegExp(`\\b${DIGIT_WORDS}(?:[\\s,-]+${DIGIT_WORDS}){2,}\\b`, 'gi') },
  { label: 'PERSON_NAME', re: /\b(?:this is|my name is|I am|I'm)\s+([A-Z][a-z]+)\b/g, group: 1 },
];

/** Find PII in `text`; entities do not overlap (earlier patterns win). */
export function findPii(text: string): PiiEntity[] {
  const found: PiiEntity[] = [];
  for (const { label, re, group } of PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const part = group === undefined ? m[0] : m[group]!;
      const start = m.index + (group === undefined ? 0 : m[0].lastIndexOf(part));
      const end = start + part.length;
      if (found.some((f) => start < f.end && end > f.start)) continue;
      found.push({ label, text: part, start, end });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** `text` with every entity replaced by `[LABEL]`. */
export function redactPii(text: string): { readonly text: string; readonly entities: PiiEntity[] } {
  const entities = findPii(text);
  let out = '';
  let at = 0;
  for (const e of entities) {
    out += text.slice(at, e.start) + `[${e.label}]`;
    at = e.end;
  }
  return { text: out + text.slice(at), entities };
}
