// The one check of an optional positive number among a component's options (a bound, a timeout):
// undefined takes the default; anything else must be finite and above zero, or it is refused typed.
import { InputError } from '../errors.js';

/**
 * `value`, or `fallback` when it is undefined. Throws `InputError('invalid_argument')` (path
 * `name`) when it is not a finite number above zero: "`owner` option `name` must be …".
 */
export function positiveOption(owner: string, name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new InputError('invalid_argument', `${owner} option ${name} must be a positive number, got ${value}`, { path: name });
  return value;
}
