// Organizations, keys, model access and per-model concurrency for the emulator (§5, §8).
// Limits are properties of the organization, fixed when a key is issued.
import { randomUUID } from 'node:crypto';
import { MODELS, type Model } from '../schema/endpoints.js';

// The model identifiers are the contract's (src/schema/endpoints.ts): one list, re-exported.
export { MODELS, type Model };

/** How to create an emulated organization (§5.1 rule 1, §8): its keys, model access, concurrency, monthly quota, credit limit and balance. */
export interface OrganizationSpec {
  readonly id?: string | undefined;
  readonly keys: readonly string[];
  /** Models this organization may use. Default: all. */
  readonly models?: readonly Model[] | undefined;
  /** Concurrent requests or connections per model. Default 3, at most 25. */
  readonly concurrency?: number | Partial<Record<Model, number>> | undefined;
  /** Monthly usage quota per model, in milliseconds of audio. Default: none. */
  readonly monthlyUsageQuotaMs?: Partial<Record<Model, number>> | undefined;
  /** Optional org-wide monthly credit limit (credits). Default: off (§8). */
  readonly monthlyCreditLimit?: number | null | undefined;
  /** Credit balance. Default: effectively unlimited. */
  readonly credits?: number | undefined;
  /** Credits one second of audio costs. Default 1. */
  readonly creditsPerAudioSecond?: number | undefined;
}

/** An emulated organization's limits and live counters (in-flight, usage, credits); tests read it to assert limits were enforced (§8). */
export interface Organization {
  readonly id: string;
  readonly keys: ReadonlySet<string>;
  readonly models: ReadonlySet<Model>;
  readonly concurrency: Readonly<Record<Model, number>>;
  /** In-flight requests or connections per model. */
  readonly inFlight: Record<Model, number>;
  /** Highest in-flight count seen per model, for tests that assert a bound. */
  readonly peakInFlight: Record<Model, number>;
  readonly monthlyUsageQuotaMs: Readonly<Partial<Record<Model, number>>>;
  /** Audio processed this month per model, in milliseconds. */
  readonly usedMs: Record<Model, number>;
  readonly monthlyCreditLimit: number | null;
  /** Credits spent this month, all models. */
  creditsSpent: number;
  /** Credits left. */
  credits: number;
  readonly creditsPerAudioSecond: number;
}

/** The `detail` texts of limit rejections (§7.1, §7.2). */
export const LIMIT_DETAILS = {
  insufficient_credits: 'Insufficient credits.',
  monthly_credit_limit: 'Monthly credit limit reached.',
  monthly_usage_limit: 'Monthly usage limit reached.',
  concurrency_limit: 'Concurrent request limit reached. Please retry after in-flight requests complete.',
} as const;
export type LimitCause = keyof typeof LIMIT_DETAILS;

export type Admission = { readonly ok: true } | { readonly ok: false; readonly cause: LimitCause; readonly detail: string }

/** Concurrent requests or connections per model when an organization sets none (3, §8). */
export const DEFAULT_CONCURRENCY = 3;
/** Highest per-model concurrency the emulator accepts (25: what an organization may set itself; above it the service needs operator approval, §8). */
export const MAX_CONCURRENCY = 25;

function zeroes(): Record<Model, number> {
  return Object.fromEntries(MODELS.map((m) => [m, 0])) as Record<Model, number>;
}

export function createOrganization(spec: OrganizationSpec): Organization {
  const conc = zeroes();
  for (const m of MODELS) {
    const c = typeof spec.concurrency === 'number' ? spec.concurrency : spec.concurrency?.[m] ?? DEFAULT_CONCURRENCY;
    if (!Number.isInteger(c) || c < 1 || c > MAX_CONCURRENCY) {
      throw new RangeError(`concurrency for ${m} must be an integer from 1 to ${MAX_CONCURRENCY}, got ${c}`);
    }
    conc[m] = c;
  }
  return {
    id: spec.id ?? randomUUID(),
    keys: new Set(spec.keys),
    models: new Set(spec.models ?? MODELS),
    concurrency: conc,
    inFlight: zeroes(),
    peakInFlight: zeroes(),
    monthlyUsageQuotaMs: { ...(spec.monthlyUsageQuotaMs ?? {}) },
    usedMs: zeroes(),
    monthlyCreditLimit: spec.monthlyCreditLimit ?? null,
    creditsSpent: 0,
    credits: spec.credits ?? Number.MAX_SAFE_INTEGER,
    creditsPerAudioSecond: spec.creditsPerAudioSecond ?? 1,
  };
}

/** The organizations of one emulator, looked up by key. */
export class AccountBook {
  private readonly byKey = new Map<string, Organization>();
  readonly organizations: Organization[] = [];

  constructor(specs: readonly OrganizationSpec[]) {
    for (const s of specs) this.add(s);
  }

  add(spec: OrganizationSpec): Organization {
    const org = createOrganization(spec);
    for (const k of org.keys) {
      if (this.byKey.has(k)) throw new Error('a key belongs to one organization only');
      this.byKey.set(k, org);
    }
    this.organizations.push(org);
    return org;
  }

  find(key: string | undefined | null): Organization | undefined {
    return key ? this.byKey.get(key) : undefined;
  }

  /**
   * Decide whether a new request or connection may start, and take a concurrency slot if so.
   * The three limits are enforced separately (§8); insufficient credits reject regardless of
   * concurrency (§7.2 rule 3). Release the slot with `release` when the work ends.
   */
  admit(org: Organization, model: Model): Admission {
    const refuse = (cause: LimitCause): Admission => ({ ok: false, cause, detail: LIMIT_DETAILS[cause] });
    if (org.credits <= 0) return refuse('insufficient_credits');
    if (org.monthlyCreditLimit !== null && org.creditsSpent >= org.monthlyCreditLimit) return refuse('monthly_credit_limit');
    const quota = org.monthlyUsageQuotaMs[model];
    if (quota !== undefined && org.usedMs[model] >= quota) return refuse('monthly_usage_limit');
    if (!this.acquire(org, model)) return refuse('concurrency_limit');
    return { ok: true };
  }

  /** Record `audioMs` of processed audio against the model's quota, the credit limit and the balance. */
  charge(org: Organization, model: Model, audioMs: number): void {
    const ms = Math.max(0, audioMs);
    org.usedMs[model] += ms;
    const credits = (ms / 1000) * org.creditsPerAudioSecond;
    org.creditsSpent += credits;
    org.credits -= credits;
  }

  /** Take a concurrency slot; false when the limit is reached (no queuing, §8). */
  acquire(org: Organization, model: Model): boolean {
    if (org.inFlight[model] >= org.concurrency[model]) return false;
    org.inFlight[model]++;
    if (org.inFlight[model] > org.peakInFlight[model]) org.peakInFlight[model] = org.inFlight[model];
    return true;
  }

  release(org: Organization, model: Model): void {
    if (org.inFlight[model] > 0) org.inFlight[model]--;
  }
}
