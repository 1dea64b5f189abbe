// Flags shared by the long-running commands (dashboard, relay, rtp, media-stream): checked
// numbers, and the promise of Ctrl-C.
import { InputError } from '../errors.js';

/** `--name value` as a number `ok` accepts, `fallback` when absent; `invalid_argument` otherwise. */
export function numberFlag(value: string | undefined, name: string, fallback: number, ok: (n: number) => boolean): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !ok(n)) throw new InputError('invalid_argument', `--${name} ${value}: not a valid value`, { path: name });
  return n;
}

/**
 * `--name value` as an integer (or, with `integer` false, any number) of at least `min`,
 * `fallback` when absent; `invalid_argument` naming the bound otherwise.
 */
export function minFlag(value: string | undefined, name: string, fallback: number, min: number, integer = true): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new InputError('invalid_argument', `--${name} expects ${integer ? 'an integer' : 'a number'} ≥ ${min}, got '${value}'`, { path: name });
  }
  return n;
}

/** Resolves when `signal` aborts (never without one). */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}
