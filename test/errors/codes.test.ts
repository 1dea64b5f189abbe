// The one table of error codes (src/errors/codes.ts): each code says once whether it is
// retryable and whether a session reconnects after it; the errors, the reconnect decision and
// docs/errors.md all read the same row.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLOSE_CODES, ERROR_CODES, ERROR_TABLE, errorFromClose, SessionError, SvcError, type ErrorCode } from '../../src/errors/index.js';
import { resumable } from '../../src/session/closeErrors.js';

const DOCS = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));

/** The rows of docs/errors.md's table of codes: code → its Retryable and Reconnects cells. */
function documentedRows(): Map<string, { retryable: string; reconnects: string }> {
  const rows = new Map<string, { retryable: string; reconnects: string }>();
  for (const line of readFileSync(DOCS, 'utf8').split('\n')) {
    const m = /^\| `([a-z_]+)` \|(.*)\|\s*$/.exec(line);
    if (!m) continue;
    const cells = m[2]!.split('|').map((c) => c.trim());
    expect(rows.has(m[1]!), `${m[1]} listed twice`).toBe(false);
    rows.set(m[1]!, { retryable: cells.at(-2)!, reconnects: cells.at(-1)! });
  }
  return rows;
}

const yesNo = (cell: string): boolean | undefined => (/^yes\b/i.test(cell) ? true : /^no\b/i.test(cell) ? false : undefined);

describe('ERROR_TABLE', () => {
  it('a code that reconnects is retryable: the decision and the error cannot disagree', () => {
    for (const code of ERROR_CODES) {
      const rule = ERROR_TABLE[code];
      if (rule.resume) expect(rule.retryable, code).toBe(true);
    }
  });

  it.each(ERROR_CODES.map((c) => [c] as const))('%s: a session error carries the row, and resumable() reads the same row', (code: ErrorCode) => {
    const e = new SessionError(code, 'x');
    expect(e.retryable).toBe(ERROR_TABLE[code].retryable);
    expect(resumable(e)).toBe(ERROR_TABLE[code].resume);
    // Any other error takes the row too unless the status decides (http_error).
    expect(new SvcError(code, 'x').retryable).toBe(ERROR_TABLE[code].retryable);
  });

  it('each close code is its code’s row: 1011 reconnects and says retryable, 1000 before done does not reconnect', () => {
    for (const [close, rule] of Object.entries(CLOSE_CODES)) {
      expect(rule.retryable, close).toBe(ERROR_TABLE[rule.code].retryable);
      expect(rule.resume, close).toBe(ERROR_TABLE[rule.code].resume);
      const e = errorFromClose(Number(close), '', undefined);
      expect(e.retryable, close).toBe(rule.retryable);
      expect(resumable(e), close).toBe(rule.resume);
    }
    expect(CLOSE_CODES[1011]).toMatchObject({ code: 'internal_error', retryable: true, resume: true });
    // The emulator's 1011 comes after the error event `Internal server error`: the same row.
    const withEvent = errorFromClose(1011, '', 'Internal server error');
    expect([withEvent.retryable, resumable(withEvent)]).toEqual([true, true]);
    expect(CLOSE_CODES[1000]).toMatchObject({ code: 'missing_done', retryable: true, resume: false });
  });
});

describe('docs/errors.md is the table', () => {
  it('lists every code once, with the table’s Retryable and Reconnects', () => {
    const rows = documentedRows();
    expect([...rows.keys()].sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      const row = rows.get(code)!;
      const rule = ERROR_TABLE[code];
      // http_error is the one row where the status decides (a 5xx is retryable).
      if (code === 'http_error') expect(row.retryable).toMatch(/5xx/);
      else expect(yesNo(row.retryable), `${code}: Retryable "${row.retryable}"`).toBe(rule.retryable);
      expect(yesNo(row.reconnects), `${code}: Reconnects "${row.reconnects}"`).toBe(rule.resume);
    }
  });
});
