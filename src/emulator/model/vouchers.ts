import { Stream, randomFor } from './random.js';

const TITLES = ['Free coffee', '10% off your next visit', '€5 birthday treat', 'Δωρεάν γλυκό'];

/** The vouchers assigned to customer `i`: 0–3 of them, expiring after `fromMs`. */
export function vouchersOf(seed: number, i: number, fromMs: number): Array<Record<string, unknown>> {
  const random = randomFor(seed, Stream.vouchers, i);
  return Array.from({ length: random.int(0, 3) }, (_, n) => {
    const title = random.pick(TITLES);
    return {
      title,
      icon: `https://cdn.example.com/vouchers/${n + 1}.png`,
      code: `V${(random.int(0, 0xffffff) >>> 0).toString(16).toUpperCase().padStart(6, '0')}`,
      value: random.pick([2, 5, 10]),
      valueType: 'fixed',
      expires: new Date(fromMs + random.int(7, 180) * 86_400_000).toISOString().slice(0, 10),
      enabled: random.chance(0.9),
      status: 'active',
      redeemed: null,
      redeemedBranch: null,
    };
  });
}

/**
 * The voucher a customer with written loyalty activity holds on top of the seeded ones: the redeemable
 * part of their balance as money, expiring with their points, enabled while it is worth something.
 */
export function pointsVoucher(customerId: string, redeemableValue: number, expires: string): Record<string, unknown> {
  return {
    title: 'Loyalty points',
    icon: 'https://cdn.example.com/vouchers/points.png',
    code: `P${customerId.slice(1)}`,
    value: redeemableValue,
    valueType: 'fixed',
    expires,
    enabled: redeemableValue > 0,
    status: 'active',
    redeemed: null,
    redeemedBranch: null,
  };
}
