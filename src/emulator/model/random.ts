/**
 * Seeded randomness for the emulator. Every generated record draws from its own stream, addressed by
 * (seed, kind, index), so any record can be produced on its own and in any order, and adding a new kind
 * of record never shifts the values of an existing one.
 */

/** The kinds of generated things; each names an independent random stream. */
export const Stream = {
  customerTimeline: 1,
  customer: 2,
  customerVersion: 3,
  accountRendering: 4,
  badAccount: 5,
  badAccountsPerDay: 6,
  surveysPerDay: 7,
  surveyElement: 8,
  badSurvey: 9,
  badSurveysPerDay: 10,
  postings: 11,
  vouchers: 12,
  faults: 13,
  drift: 14,
  contactless: 15,
  postingWallets: 16,
  surveyDuplicates: 17,
  listingOrder: 18,
  unlistedFields: 19,
} as const;

/** A stream kind from {@link Stream}. */
export type StreamKind = (typeof Stream)[keyof typeof Stream];

/** Murmur3's finalizer: a cheap, well-mixing bijection on 32-bit integers. */
function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Bits above the low 32 of a safe integer: seeds and indexes may exceed 32 bits. */
function high(x: number): number {
  return Math.floor(x / 4294967296) >>> 0;
}

/** The 32-bit starting state of the stream (seed, kind, a, b). */
export function streamSeed(seed: number, kind: StreamKind, a: number, b = 0): number {
  let h = mix32((seed >>> 0) ^ 0x9e3779b9);
  h = mix32(h ^ high(seed) ^ Math.imul(kind, 0x27d4eb2f));
  h = mix32(h + (a >>> 0) + Math.imul(high(a), 0x165667b1));
  h = mix32(h ^ Math.imul((b >>> 0) + 1, 0x61c88647));
  return h;
}

/** A small deterministic pseudo-random generator (mulberry32). */
export class Random {
  private state: number;

  /** @param state 32-bit starting state, usually from {@link streamSeed}. */
  constructor(state: number) {
    this.state = state >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A number in [min, max) rounded to `places` decimals. */
  decimal(min: number, max: number, places: number): number {
    return roundTo(min + this.next() * (max - min), places);
  }
}

/** The generator of stream (seed, kind, a, b). */
export function randomFor(seed: number, kind: StreamKind, a: number, b = 0): Random {
  return new Random(streamSeed(seed, kind, a, b));
}

/** Rounds half away from zero to `places` decimals, the way money is shown. */
export function roundTo(value: number, places: number): number {
  const factor = 10 ** places;
  return Math.round(value * factor) / factor;
}
