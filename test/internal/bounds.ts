// Deadlines checked as bounds without reading a clock: a guard timer races the promise.

/**
 * Whether `promise` settles (resolves or rejects) before a guard timer of `ms` fires. The guard is
 * cleared either way; the promise's own outcome is left for the caller to await.
 */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let guard: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (guard = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const, () => true as const), late]);
  } finally {
    clearTimeout(guard);
  }
}

/**
 * Let the event loop turn `n` times (each turn runs every pending microtask, then one round of
 * immediates). For in-memory work that yields with setImmediate between steps, "nothing more
 * happened after n turns" is a fact about the code, not about the machine's speed.
 */
export async function loopTurns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
