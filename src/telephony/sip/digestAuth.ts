// HTTP digest authentication for SIP requests (RFC 3261 §22, RFC 2617, RFC 8760's SHA-256):
// the challenge a 401 carries, and the check of an Authorization header against it. Stateless:
// a nonce is its own issue time signed with a per-server secret, so a flood costs no memory.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Digest algorithms offered, strongest first in a challenge (RFC 8760 §2.4). */
export type DigestAlgorithm = 'SHA-256' | 'MD5';

/** Options of digest authentication (`auth` of `sipServer`). */
export interface SipDigestAuth {
  /** The realm in the challenge (default `svc-stream`). */
  readonly realm?: string | undefined;
  /** The password of `username`, or undefined for a user who may not call. A map works too. */
  readonly users: Readonly<Record<string, string>> | ((username: string) => string | undefined);
  /** Algorithms challenged, in order (default both, SHA-256 first). */
  readonly algorithms?: readonly DigestAlgorithm[] | undefined;
  /** How long a nonce is good for, ms (default 300 000). */
  readonly nonceTtlMs?: number | undefined;
}

/** Why a request's credentials were refused (counted, given to `onRefused`). */
export type DigestRefusal = 'no_credentials' | 'bad_credentials' | 'unknown_user' | 'stale_nonce' | 'wrong_password';

const HASH: Record<DigestAlgorithm, string> = { 'SHA-256': 'sha256', MD5: 'md5' };

function h(alg: DigestAlgorithm, text: string): string {
  return createHash(HASH[alg]).update(text).digest('hex');
}

/** Parse `Digest a="b", c=d` into its fields (names lower case). Undefined when it is not Digest. */
export function parseDigest(header: string): Record<string, string> | undefined {
  const m = /^\s*Digest\s+([\s\S]*)$/i.exec(header);
  if (!m) return undefined;
  const out: Record<string, string> = {};
  const re = /\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)/gy;
  const text = m[1]!;
  let match: RegExpExecArray | null;
  let last = 0;
  while ((match = re.exec(text)) !== null) {
    out[match[1]!.toLowerCase()] = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]!;
    last = re.lastIndex;
    if (last >= text.length) break;
  }
  if (text.slice(last).trim() !== '') return undefined;
  return out;
}

/** The challenges and the checks of one server: its secret lives as long as it does. */
export class DigestVerifier {
  private readonly secret = randomBytes(32);
  private readonly realm: string;
  private readonly algorithms: readonly DigestAlgorithm[];
  private readonly ttl: number;

  constructor(
    private readonly options: SipDigestAuth,
    private readonly now: () => number,
  ) {
    this.realm = options.realm ?? 'svc-stream';
    this.algorithms = options.algorithms?.length ? options.algorithms : ['SHA-256', 'MD5'];
    this.ttl = options.nonceTtlMs ?? 300_000;
  }

  private nonce(): string {
    const t = Math.floor(this.now()).toString(36);
    const sig = createHmac('sha256', this.secret).update(t).digest('base64url').slice(0, 22);
    return `${t}.${sig}`;
  }

  private nonceAge(nonce: string): number | undefined {
    const [t, sig] = nonce.split('.');
    if (t === undefined || sig === undefined) return undefined;
    const want = Buffer.from(createHmac('sha256', this.secret).update(t).digest('base64url').slice(0, 22));
    const got = Buffer.from(sig);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
    return this.now() - parseInt(t, 36);
  }

  /** The WWW-Authenticate values of a 401, one per algorithm (`stale` after an expired nonce). */
  challenges(stale = false): string[] {
    const nonce = this.nonce();
    return this.algorithms.map((a) => `Digest realm="${this.realm}", nonce="${nonce}", algorithm=${a}, qop="auth"${stale ? ', stale=true' : ''}`);
  }

  /** Check a request's Authorization against its method; undefined when it passes. */
  verify(method: string, authorization: string | undefined): DigestRefusal | undefined {
    if (authorization === undefined) return 'no_credentials';
    const d = parseDigest(authorization);
    if (!d || d['username'] === undefined || d['nonce'] === undefined || d['uri'] === undefined || d['response'] === undefined || d['realm'] !== this.realm) return 'bad_credentials';
    const alg = (d['algorithm'] ?? 'MD5').toUpperCase() === 'SHA-256' ? 'SHA-256' : (d['algorithm'] ?? 'MD5').toUpperCase() === 'MD5' ? 'MD5' : undefined;
    if (alg === undefined || !this.algorithms.includes(alg)) return 'bad_credentials';
    const age = this.nonceAge(d['nonce']);
    if (age === undefined) return 'bad_credentials';
    const users = this.options.users;
    const password = typeof users === 'function' ? users(d['username']) : Object.hasOwn(users, d['username']) ? users[d['username']] : undefined;
    if (password === undefined) return 'unknown_user';
    const ha1 = h(alg, `${d['username']}:${this.realm}:${password}`);
    const ha2 = h(alg, `${method}:${d['uri']}`);
    const qop = d['qop'];
    if (qop !== undefined && qop !== 'auth') return 'bad_credentials';
    const expected = qop === 'auth' ? h(alg, `${ha1}:${d['nonce']}:${d['nc'] ?? ''}:${d['cnonce'] ?? ''}:auth:${ha2}`) : h(alg, `${ha1}:${d['nonce']}:${ha2}`);
    const a = Buffer.from(expected);
    const b = Buffer.from(d['response'].toLowerCase());
    if (a.length !== b.length || !timingSafeEqual(a, b)) return 'wrong_password';
    // A right answer to an old nonce: the client tries again with a fresh one (stale=true), no new password asked.
    if (age > this.ttl || age < -60_000) return 'stale_nonce';
    return undefined;
  }
}

/** A client's Authorization value for a challenge (tests, and a UAC written with this library). */
export function digestAuthorization(challenge: string, method: string, uri: string, username: string, password: string, cnonce = randomBytes(8).toString('hex')): string {
  const c = parseDigest(challenge);
  if (!c) throw new Error('not a Digest challenge');
  const alg: DigestAlgorithm = (c['algorithm'] ?? 'MD5').toUpperCase() === 'SHA-256' ? 'SHA-256' : 'MD5';
  const ha1 = h(alg, `${username}:${c['realm']}:${password}`);
  const ha2 = h(alg, `${method}:${uri}`);
  const nc = '00000001';
  const response = h(alg, `${ha1}:${c['nonce']}:${nc}:${cnonce}:auth:${ha2}`);
  return `Digest username="${username}", realm="${c['realm']}", nonce="${c['nonce']}", uri="${uri}", response="${response}", algorithm=${alg}, qop=auth, nc=${nc}, cnonce="${cnonce}"`;
}
