// Keys kept out of every error: the message, detail and cause of an error are masked with the
// keys of the call or session that built it (nothing is remembered between errors).
import { redact, redactDeep } from '../redact.js';

/** The keys an error's options name (see `SvcErrorOptions.secrets`). */
export function secretsOf(options: { readonly secrets?: readonly (string | undefined)[] | undefined }): readonly (string | undefined)[] {
  return options.secrets ?? [];
}

/** For a subclass's own fields (a job record…): `value` masked as SvcError masks its detail. */
export function maskSecrets<T>(value: T, options: { readonly secrets?: readonly (string | undefined)[] | undefined }): T {
  return redactDeep(value, secretsOf(options));
}

/** A cause that shows a key (in its message or stack) is replaced by a masked copy. */
export function maskedCause(cause: unknown, secrets: readonly (string | undefined)[]): unknown {
  if (cause instanceof Error) {
    const text = `${cause.message}\n${cause.stack ?? ''}`;
    if (redact(text, secrets) === text) return cause;
    const copy = new Error(redact(cause.message, secrets));
    copy.name = cause.name;
    copy.stack = redact(cause.stack ?? '', secrets);
    return copy;
  }
  return redactDeep(cause, secrets);
}
