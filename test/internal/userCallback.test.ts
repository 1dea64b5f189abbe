// The one policy for a user's callback that throws: reported as RxJS reports an unhandled
// error, and nothing else changes.
import { config } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { callUser, reportUnhandled } from '../../src/internal/userCallback.js';

const reported = () => {
  const errors: unknown[] = [];
  config.onUnhandledError = (err) => errors.push(err);
  return errors;
};
afterEach(() => {
  config.onUnhandledError = null;
});
const nextTimer = () => new Promise((r) => setTimeout(r, 0));

describe('callUser', () => {
  it('calls the callback with the arguments, and does nothing without one', () => {
    const seen: unknown[] = [];
    callUser((a: number, b: string) => seen.push(a, b), 1, 'x');
    callUser(undefined as ((a: number) => void) | undefined, 2);
    expect(seen).toEqual([1, 'x']);
  });

  it('a throw returns normally here and is reported on a later turn, not on this stack', async () => {
    const errors = reported();
    const boom = new Error('user code');
    expect(() => callUser(() => { throw boom; })).not.toThrow();
    expect(errors).toEqual([]);
    await nextTimer();
    expect(errors).toEqual([boom]);
  });
});

describe('reportUnhandled', () => {
  it("goes to RxJS's onUnhandledError when one is set", async () => {
    const errors = reported();
    reportUnhandled('why');
    await nextTimer();
    expect(errors).toEqual(['why']);
  });
});
