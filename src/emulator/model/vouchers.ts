import type { LocalDays } from './local-days.js';
import { POINT_VALUE } from './loyalty-tiers.js';
import type { LoyaltyState } from './loyalty-summary.js';
import { BRANDS } from './name-pools.js';
import { type Random, Stream, randomFor, roundTo } from './random.js';
import { renderTimestamp } from './rendering.js';
import { DAY_MS, isoUtc } from './zone-clock.js';

/** What the program issues, and what each is worth. */
const KINDS = [
  { title: 'Free coffee', value: 3, valueType: 'fixed', icon: 'coffee' },
  { title: '10% off your next visit', value: 10, valueType: 'percent', icon: 'percent' },
  { title: '€5 birthday treat', value: 5, valueType: 'fixed', icon: 'gift' },
  { title: 'Δωρεάν γλυκό', value: 4, valueType: 'fixed', icon: 'dessert' },
] as const;

/** Days a redeemed or expired voucher stays listed before it vanishes from the customer's list. */
export const LISTED_DAYS_AFTER_USE = 30;

/** A voucher's state: usable, used, or past its last valid day. */
export type VoucherStatus = 'active' | 'redeemed' | 'expired';

/** A voucher a customer holds at one instant, canonical (the lookup renders it, the ground truth normalizes it). */
export interface HeldVoucher {
  code: string;
  title: string;
  icon: string;
  value: number;
  valueType: string;
  /** Last valid day, `YYYY-MM-DD` in the business's zone. */
  expires: string;
  status: VoucherStatus;
  enabled: boolean;
  redeemedMs: number | null;
  /** `redeemed` as served: a response timestamp, local or labelled UTC. */
  redeemedText: string | null;
  redeemedBranch: string | null;
}

/** A voucher as a correct warehouse holds it. */
export interface TruthVoucher {
  customer_id: string;
  code: string;
  title: string;
  icon: string;
  value: number;
  value_type: string;
  /** YYYY-MM-DD */
  expires_on: string;
  enabled: boolean;
  status: VoucherStatus;
  /** ISO UTC, or null while not redeemed */
  redeemed_at: string | null;
  redeemed_branch: string | null;
}

/**
 * The seeded vouchers customer `i` (joined at `joinedMs`) holds at `asOfMs`, oldest first. The program
 * issues one every 15–75 days from the customer's joining (the first within 20 days), for ever: the data
 * range does not stop it. Each is valid 30–90 days through the end of its last day; 45% are redeemed on an
 * instant before that. A voucher is listed from its issue until {@link LISTED_DAYS_AFTER_USE} days after it
 * was redeemed or expired; then it vanishes. Voucher `n` draws from stream (seed, vouchers, i, n) alone.
 */
export function seededVouchers(
  seed: number,
  i: number,
  joinedMs: number,
  asOfMs: number,
  days: LocalDays,
): HeldVoucher[] {
  const held: HeldVoucher[] = [];
  let issuedMs = joinedMs;
  for (let n = 0; ; n++) {
    const random = randomFor(seed, Stream.vouchers, i, n);
    issuedMs += (n === 0 ? random.int(0, 20) : random.int(15, 75)) * DAY_MS + random.int(0, 86_399) * 1000;
    if (issuedMs > asOfMs) return held;
    const voucher = drawVoucher(random, n, issuedMs, days);
    const endMs = voucher.redeemedMs ?? voucher.expiresMs;
    if (endMs + LISTED_DAYS_AFTER_USE * DAY_MS <= asOfMs) continue;
    const status: VoucherStatus =
      voucher.redeemedMs !== null && voucher.redeemedMs <= asOfMs
        ? 'redeemed'
        : asOfMs >= voucher.expiresMs
          ? 'expired'
          : 'active';
    const { expiresMs: _, redeemedMs, redeemedText, redeemedBranch, ...rest } = voucher;
    const used = status === 'redeemed';
    held.push({
      ...rest,
      status,
      enabled: status === 'active',
      redeemedMs: used ? redeemedMs : null,
      redeemedText: used ? redeemedText : null,
      redeemedBranch: used ? redeemedBranch : null,
    });
  }
}

function drawVoucher(random: Random, n: number, issuedMs: number, days: LocalDays) {
  const kind = random.pick(KINDS);
  const code = `V${random.int(0, 0xffffff).toString(16).toUpperCase().padStart(6, '0')}${n.toString(36).toUpperCase().padStart(2, '0')}`;
  const lastDay = days.dayOf(issuedMs) + random.int(30, 90);
  const expiresMs = days.startOf(lastDay + 1);
  // Every draw is made whether or not the voucher is redeemed, so one voucher's fate never shifts another's values.
  const redeemed = random.chance(0.45);
  // Whole seconds: the served timestamp has no fraction.
  const redeemedMs = issuedMs + 60_000 + Math.floor((random.next() * (expiresMs - issuedMs - 120_000)) / 1000) * 1000;
  const brand = random.pick(BRANDS);
  const branch = random.pick(brand.branches);
  const redeemedText = renderTimestamp(redeemedMs, random, days.clock);
  return {
    code,
    title: kind.title,
    icon: `https://cdn.example.com/vouchers/${kind.icon}.png`,
    value: kind.value,
    valueType: kind.valueType,
    expires: days.format(lastDay),
    expiresMs,
    redeemedMs: redeemed ? redeemedMs : null,
    redeemedText: redeemed ? redeemedText : null,
    redeemedBranch: redeemed ? branch : null,
  };
}

/**
 * The voucher a customer with written loyalty activity holds on top of the seeded ones: the redeemable
 * part of their home wallet as money, valid through the last day of their next points to expire (today when
 * none are left), enabled while it is worth something.
 */
export function pointsVoucher(customerId: string, state: LoyaltyState, days: LocalDays): HeldVoucher {
  const value = roundTo(state.wallets[0]!.redeemable * POINT_VALUE, 4);
  return {
    code: `P${customerId.slice(1)}`,
    title: 'Loyalty points',
    icon: 'https://cdn.example.com/vouchers/points.png',
    value,
    valueType: 'fixed',
    expires: state.nextExpiry?.date ?? days.format(days.dayOf(state.asOfMs)),
    status: 'active',
    enabled: value > 0,
    redeemedMs: null,
    redeemedText: null,
    redeemedBranch: null,
  };
}

/** A voucher as `GET /accounts/vouchers/get` serves it. */
export function renderVoucher(voucher: HeldVoucher): Record<string, unknown> {
  return {
    title: voucher.title,
    icon: voucher.icon,
    code: voucher.code,
    value: voucher.value,
    valueType: voucher.valueType,
    expires: voucher.expires,
    enabled: voucher.enabled,
    status: voucher.status,
    redeemed: voucher.redeemedText,
    redeemedBranch: voucher.redeemedBranch,
  };
}

/** The canonical (warehouse) form of a held voucher. */
export function truthVoucher(customerId: string, voucher: HeldVoucher): TruthVoucher {
  return {
    customer_id: customerId,
    code: voucher.code,
    title: voucher.title,
    icon: voucher.icon,
    value: voucher.value,
    value_type: voucher.valueType,
    expires_on: voucher.expires,
    enabled: voucher.enabled,
    status: voucher.status,
    redeemed_at: voucher.redeemedMs === null ? null : isoUtc(voucher.redeemedMs),
    redeemed_branch: voucher.redeemedBranch,
  };
}
