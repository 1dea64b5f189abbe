// The contract's size and concurrency limits (§2.1, §4.5, §8), one constant each, shared by
// the client and the emulator. "MB" is read as 1 000 000 bytes everywhere: the smaller
// reading, so a file refused by neither reading is the only kind let through.

/**
 * Batch endpoints (§2.1, §8): "Maximum size 100 MB" per `upload_file`, read as 100 000 000
 * bytes. The binary reading (104 857 600) would pass files the service may refuse.
 */
export const MAX_UPLOAD_BYTES = 100_000_000;

/** Orchestration single-file batch (§4.5 b, §8): "at most 5 MB", read as 5 000 000 bytes. */
export const SINGLE_FILE_MAX_BYTES = 5_000_000;

/** The service's stated default concurrency per organization and model (§8). */
export const DEFAULT_BATCH_CONCURRENCY = 3;

/** The most concurrency an organization can set per model without the operator's approval (§8). */
export const MAX_BATCH_CONCURRENCY = 25;

/** `100,000,000 bytes (100 MB)`: the exact byte count first, the contract's words after. */
export function describeByteLimit(bytes: number): string {
  const mb = bytes / 1_000_000;
  return `${bytes.toLocaleString('en-US')} bytes${Number.isInteger(mb) ? ` (${mb} MB)` : ''}`;
}
