/**
 * Faults the emulated source can inject. Every share is a probability per request (or per listing for
 * drift), drawn from a generator seeded by `seed` and the request itself, so the same client making the
 * same requests meets the same faults. A request meets at most one of hang, 5xx, 429 and error body; a cut
 * body is drawn from the same die, so all five shares together may not exceed 1.
 *
 * Faults only touch the source's endpoints, never `/_emulator/…`, and they never change the data: see
 * "Faults" in the emulator's README for what the ground truth means under drift.
 */
export interface FaultOptions {
  /** Seed of the fault generator. Default: the dataset's seed. */
  seed?: number;
  /** Delay before every answer, in ms. Default 0. */
  latencyMs?: number;
  /** Extra delay, uniform in [0, jitterMs), added to `latencyMs`. Default 0. */
  jitterMs?: number;
  /** Share of requests answered 500, 502 (an HTML proxy page, not JSON) or 503. Default 0. */
  serverErrorRate?: number;
  /** Share of requests answered 429 with a `Retry-After` header. Default 0. */
  tooManyRequestsRate?: number;
  /** `Retry-After` of the 429 answers, in whole seconds. Default 1. */
  retryAfterSeconds?: number;
  /** Share of requests never answered (the connection stays open until the client gives up). Default 0. */
  hangRate?: number;
  /** Share of successful answers whose body is cut off mid-JSON (connection reset, or a short clean body). Default 0. */
  cutBodyRate?: number;
  /** Share of requests answered HTTP 200 with a 1xxx error body `{code, message}` instead of data. Default 0. */
  errorBodyRate?: number;
  /** The code of those error bodies: 1002, 1004, 1006 or 1010 (1005 would read as "no postings"). Default 1006. */
  errorBodyCode?: number;
  /** Share of listings (an export window, a customer's postings) that change while they are paged. Default 0. */
  driftRate?: number;
  /** Page reads of a drifting listing that see it changed, before it settles. Default 1. */
  driftReads?: number;
  /** After this many source requests (counted from when the faults were set), every request gets 503. Default: never. */
  downAfter?: number | null;
}

/** {@link FaultOptions} with every default filled in. */
export type ResolvedFaults = Required<FaultOptions>;

/** Codes an error-body fault may carry. */
export const ERROR_BODY_CODES = [1002, 1004, 1006, 1010] as const;

const SHARES = ['serverErrorRate', 'tooManyRequestsRate', 'hangRate', 'cutBodyRate', 'errorBodyRate'] as const;

/**
 * Fills in defaults and checks every fault option, throwing a RangeError naming the bad one.
 *
 * @example resolveFaults({ serverErrorRate: 0.1 }, 7).hangRate // 0
 */
export function resolveFaults(options: FaultOptions = {}, datasetSeed = 1): ResolvedFaults {
  const faults: ResolvedFaults = {
    seed: options.seed ?? datasetSeed,
    latencyMs: options.latencyMs ?? 0,
    jitterMs: options.jitterMs ?? 0,
    serverErrorRate: options.serverErrorRate ?? 0,
    tooManyRequestsRate: options.tooManyRequestsRate ?? 0,
    retryAfterSeconds: options.retryAfterSeconds ?? 1,
    hangRate: options.hangRate ?? 0,
    cutBodyRate: options.cutBodyRate ?? 0,
    errorBodyRate: options.errorBodyRate ?? 0,
    errorBodyCode: options.errorBodyCode ?? 1006,
    driftRate: options.driftRate ?? 0,
    driftReads: options.driftReads ?? 1,
    downAfter: options.downAfter ?? null,
  };
  check(Number.isSafeInteger(faults.seed) && faults.seed >= 0, 'faults.seed must be a non-negative integer');
  for (const key of ['latencyMs', 'jitterMs'] as const)
    check(Number.isFinite(faults[key]) && faults[key] >= 0, `faults.${key} must be a non-negative number`);
  for (const key of [...SHARES, 'driftRate'] as const)
    check(faults[key] >= 0 && faults[key] <= 1, `faults.${key} must be a share within 0..1`);
  check(
    SHARES.reduce((sum, key) => sum + faults[key], 0) <= 1 + 1e-9,
    `faults: ${SHARES.join(' + ')} must not exceed 1`,
  );
  check(
    Number.isInteger(faults.retryAfterSeconds) && faults.retryAfterSeconds >= 0,
    'faults.retryAfterSeconds must be a whole number of seconds',
  );
  check(
    (ERROR_BODY_CODES as readonly number[]).includes(faults.errorBodyCode),
    `faults.errorBodyCode must be one of ${ERROR_BODY_CODES.join(', ')}`,
  );
  check(
    Number.isInteger(faults.driftReads) && faults.driftReads >= 0,
    'faults.driftReads must be a non-negative integer',
  );
  if (faults.downAfter !== null)
    check(
      Number.isInteger(faults.downAfter) && faults.downAfter >= 0,
      'faults.downAfter must be a non-negative integer',
    );
  return faults;
}

/** Whether any fault is switched on (the layer then costs nothing when none is). */
export function hasFaults(faults: ResolvedFaults): boolean {
  return (
    faults.latencyMs > 0 ||
    faults.jitterMs > 0 ||
    faults.driftRate > 0 ||
    faults.downAfter !== null ||
    SHARES.some((key) => faults[key] > 0)
  );
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new RangeError(message);
}
