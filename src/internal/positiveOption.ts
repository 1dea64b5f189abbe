// The one check of an optional positive number among a component's options (a bound, a timeout,
// a count): undefined takes the default; anything else must be finite and above zero (a whole
// number for a count), or it is refused typed, naming the option.
import { InputError } from '../errors/index.js';

/**
 * `value`, or `fallback` when it is undefined. Throws `InputError('invalid_argument')` (path
 * `name`) when it is not a finite number above zero: "`owner` option `name` must be …".
 */
export function positiveOption(owner: string, name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new InputError('invalid_argument', `${owner} option ${name} must be a positive number, got ${value}`, { path: name });
  return value;
}

/**
 * `value`, or `fallback` when it is undefined. Throws `InputError('invalid_argument')` (path
 * `name`) when it is not a whole number of at least 1: "`owner` option `name` must be …".
 */
export function positiveInteger(owner: string, name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new InputError('invalid_argument', `${owner} option ${name} must be a positive integer, got ${value}`, { path: name });
  return value;
}
