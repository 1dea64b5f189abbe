// The limits every HTTP exchange of the library runs under, and their defaults: public, so a
// caller can read and pass them; the HTTP core (src/internal/http.ts) enforces them.

/** Limits on one HTTP exchange. Every batch call, the preset listing and the PlatformClient take them. */
export interface HttpLimits {
  /**
   * Time from the end of the request (the last byte of an upload) to the response headers, in
   * ms. Default 120 000: a batch call may take up to the service's 60 s processing limit. 0: no limit.
   */
  readonly headersTimeoutMs?: number | undefined;
  /**
   * Longest time in ms with no byte moving while an upload is sent or an answer's body is read.
   * Default 10 000. 0: no limit.
   */
  readonly idleTimeoutMs?: number | undefined;
  /** Largest response body accepted, in bytes. Default 8 MiB. */
  readonly maxResponseBytes?: number | undefined;
}

/** The defaults of HttpLimits, and how many same-origin redirects are followed. */
export const HTTP_DEFAULTS = {
  headersTimeoutMs: 120_000,
  idleTimeoutMs: 10_000,
  maxResponseBytes: 8 << 20,
  maxRedirects: 3,
} as const;
