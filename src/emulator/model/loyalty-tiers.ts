/** The program every customer belongs to. */
export const LOYALTY_PROGRAM = { name: 'Loyalty Club', logo: 'https://cdn.example.com/loyalty/program.png' } as const;

/** Money value of one point, in the wallet's currency. */
export const POINT_VALUE = 0.05;

/** A tier of the loyalty program. */
export interface LoyaltyTier {
  readonly order: number;
  readonly name: string;
  /** Cumulative credit at which the tier is reached. */
  readonly attain: number;
  readonly benefits: string;
}

/** The program's tiers, lowest first. */
export const LOYALTY_TIERS: readonly LoyaltyTier[] = [
  { order: 1, name: 'Bronze', attain: 0, benefits: '1 point per euro' },
  { order: 2, name: 'Silver', attain: 300, benefits: '1.2 points per euro, birthday coffee' },
  { order: 3, name: 'Gold', attain: 1500, benefits: '1.5 points per euro, free delivery' },
  { order: 4, name: 'Platinum', attain: 5000, benefits: '2 points per euro, "VIP" events' },
];

/** The tier held with `cumulativeCredit` points earned in total. */
export function tierFor(cumulativeCredit: number): LoyaltyTier {
  let tier = LOYALTY_TIERS[0]!;
  for (const candidate of LOYALTY_TIERS) if (cumulativeCredit >= candidate.attain) tier = candidate;
  return tier;
}

/** The tier after `tier`, or null at the top. */
export function nextTier(tier: LoyaltyTier): LoyaltyTier | null {
  return LOYALTY_TIERS.find((t) => t.order === tier.order + 1) ?? null;
}

/** Points credited per unit of money paid in `tier`: 1 in the first tier, a quarter more per tier above it. */
export function earnMultiplier(tier: LoyaltyTier): number {
  return 1 + (tier.order - 1) * 0.25;
}
