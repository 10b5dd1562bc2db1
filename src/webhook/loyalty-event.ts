import { z } from 'zod';
import { zodProblem } from '../streams/zod-problem.js';
import { canonicalJson, contentKey } from '../transform/keys.js';
import { RecordError } from '../transform/record-error.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';
import { cleanDecimal, cleanInteger, cleanText, storableJson } from '../transform/values.js';
import { InvalidEventError } from './webhook-errors.js';

const text = z.union([z.string(), z.null()]).optional();
const number = z.union([z.number(), z.string(), z.null()]).optional();

const tierSchema = z.looseObject({ name: text, tierOrder: number }).nullish();

/**
 * A loyalty webhook body (spec, "Loyalty updated webhook"). Only what the pipeline relies on is required: the
 * trigger, the customer's `accountId` (postings are asked for that customer) and an `entity`; the members the
 * `loyalty_events` columns take are typed; everything else is kept as sent in `payload`.
 */
export const loyaltyEventSchema = z.looseObject({
  origin: z.looseObject({
    trigger: z.string().trim().min(1, 'must not be empty'),
    source: text,
    country: z.looseObject({ iso: text }).nullish(),
  }),
  customer: z.looseObject({
    accountId: z.string().trim().min(1, 'must not be empty'),
    // The spec calls it a String; the source's account lookup sends phones as numbers, so both are taken.
    phone: z.union([z.string(), z.number(), z.null()]).optional(),
  }),
  entity: z.looseObject({
    loyaltyTier: tierSchema,
    wallets: z.array(z.looseObject({ point: number })).nullish(),
    cumulativeCredit: number,
    pointExpiry: text,
  }),
  generic: z.boolean().nullish(),
});

/**
 * The largest body the receiver takes, and the largest payload a spooled event may bring to `loyalty_events`:
 * far above a real event's. Values larger than DuckDB's block would pile up against `memory_limit` until the
 * table can no longer checkpoint, blocking the warehouse rather than filling it (docs/webhook.md).
 */
export const MAX_EVENT_BYTES = 64 << 10;

/** A `loyalty_events` row before the receiver numbers and stamps it. */
export interface LoyaltyEvent {
  /** Derived from the whole body: a redelivered call has the same key. */
  event_key: string;
  event_trigger: string;
  origin_source: string | null;
  country_iso: string | null;
  customer_id: string;
  phone: string | null;
  tier_name: string | null;
  tier_order: number | null;
  /** Sum of the wallets' points, DECIMAL text. */
  points: string | null;
  cumulative_credit: string | null;
  /** ISO UTC. */
  point_expiry: string | null;
  /** The body as received, canonical JSON. */
  payload: string;
}

/**
 * Validates a webhook body and turns it into a `loyalty_events` row. The event key is the content key of the
 * body's canonical JSON (object keys sorted), so the same call delivered again — or re-serialized with its
 * members in another order — is the same event. Zone-less timestamps are read in `timezone`.
 *
 * @example parseLoyaltyEvent(JSON.parse(body), 'Europe/Athens').customer_id // 'C000042'
 */
export function parseLoyaltyEvent(received: unknown, timezone: string): LoyaltyEvent {
  // PostgreSQL's text and jsonb cannot hold a NUL character: the body is read and kept without them
  const body = storableJson(received);
  const payload = canonicalJson(body);
  const parsed = loyaltyEventSchema.safeParse(body);
  if (!parsed.success) throw new InvalidEventError(zodProblem(parsed.error));
  const { origin, customer, entity } = parsed.data;
  try {
    const points = entity.wallets?.reduce<number | null>((sum, w) => {
      const p = cleanDecimal(w.point, 'entity.wallets.point');
      return p === null ? sum : (sum ?? 0) + Number(p);
    }, null);
    const expiry = cleanText(entity.pointExpiry, 'entity.pointExpiry');
    return {
      event_key: contentKey('loyalty_event', payload),
      event_trigger: origin.trigger.trim(),
      origin_source: cleanText(origin.source, 'origin.source'),
      country_iso: cleanText(origin.country?.iso, 'origin.country.iso'),
      customer_id: customer.accountId.trim(),
      phone: cleanText(customer.phone, 'customer.phone'),
      tier_name: cleanText(entity.loyaltyTier?.name, 'entity.loyaltyTier.name'),
      tier_order: cleanInteger(entity.loyaltyTier?.tierOrder, 'entity.loyaltyTier.tierOrder'),
      points: points === null || points === undefined ? null : cleanDecimal(points, 'entity.wallets.point'),
      cumulative_credit: cleanDecimal(entity.cumulativeCredit, 'entity.cumulativeCredit'),
      point_expiry: expiry === null ? null : parseSourceTimestamp(expiry, timezone, 'entity.pointExpiry'),
      payload,
    };
  } catch (error) {
    if (error instanceof RecordError) throw new InvalidEventError(error.message);
    throw error;
  }
}
