import { describe, expect, it } from 'vitest';
import { LOYALTY_TIERS, loyaltyUpdatedBody } from '../../src/emulator/index.js';
import { parseLoyaltyEvent } from '../../src/webhook/loyalty-event.js';
import { InvalidEventError } from '../../src/webhook/webhook-errors.js';

/** A body exactly as the emulator sends it. */
function body(): any {
  const version = {
    index: 41,
    version: 0,
    customerId: 'C000042',
    phone: '306912345678',
    email: 'a@b.gr',
    first: 'Ελένη',
    last: null,
    birthdate: null,
    source: null,
    profileSetMs: Date.parse('2024-03-01T10:00:00Z'),
    country: 'GR',
    customerSinceMs: null,
    memberSinceMs: null,
    nationality: null,
    gender: 'F',
    city: 'Πάτρα',
    language: 'el',
    customFields: [['pet', 'cat'] as [string, string | null]],
  };
  const posting = {
    postedMs: Date.parse('2024-03-21T08:00:00Z'),
    txnMs: Date.parse('2024-03-21T07:58:00Z'),
    credit: 320,
    creditValue: 16,
    debit: 0,
    debitValue: 0,
    awardOn: 320,
    currency: 'EUR',
    receipt: 'R1',
    branchName: 'POS-1',
    brandName: 'Store',
    countryIso: 'GR',
    country: 'Greece',
    tierOrder: 1,
    tierName: LOYALTY_TIERS[0]!.name,
    type: 1,
    postingType: 1,
  };
  return loyaltyUpdatedBody(version, [posting], 'POS');
}

describe('loyalty webhook events', () => {
  it('takes the columns from a body as the service sends it', () => {
    const event = parseLoyaltyEvent(body(), 'Europe/Athens');
    expect(event).toMatchObject({
      event_trigger: 'LOYALTY_POINT_UPDATED',
      origin_source: 'POS',
      country_iso: 'GR',
      customer_id: 'C000042',
      phone: '306912345678',
      tier_name: 'Silver',
      tier_order: 2,
      points: '320.0000',
      cumulative_credit: '320.0000',
      point_expiry: '2024-04-30T21:00:00.000Z', // Bronze points of 21 March, valid 30 days, expire as May starts in Athens
    });
    expect(JSON.parse(event.payload)).toEqual(body());
    expect(event.event_key).toMatch(/^[0-9a-f]{24}$/);
  });

  it('derives the same key from the same content, whatever the order of members, and another from other content', () => {
    const a = parseLoyaltyEvent(body(), 'UTC');
    const reordered = Object.fromEntries(Object.entries(body()).reverse());
    expect(parseLoyaltyEvent(reordered, 'UTC').event_key).toBe(a.event_key);
    const other = body();
    other.entity.wallets[0].point = 321;
    expect(parseLoyaltyEvent(other, 'UTC').event_key).not.toBe(a.event_key);
  });

  it('reads zone-less timestamps in the source zone, and takes a phone sent as a number', () => {
    const b = body();
    b.entity.pointExpiry = '2025-03-21 10:00:00';
    b.customer.phone = 306912345678;
    const event = parseLoyaltyEvent(b, 'Europe/Athens');
    expect(event.point_expiry).toBe('2025-03-21T08:00:00.000Z');
    expect(event.phone).toBe('306912345678');
  });

  it.each([
    ['no trigger', (b: any) => (delete b.origin.trigger, b), 'origin.trigger'],
    ['no customer id', (b: any) => ((b.customer.accountId = ' '), b), 'customer.accountId'],
    ['no entity', (b: any) => (delete b.entity, b), 'entity'],
    ['points that are not a number', (b: any) => ((b.entity.wallets[0].point = 'many'), b), 'entity.wallets.point'],
    ['an expiry that is not a time', (b: any) => ((b.entity.pointExpiry = 'next year'), b), 'entity.pointExpiry'],
    ['a list for a body', (b: any) => [b], 'expected object'],
  ])('rejects a body with %s, naming the problem', (_, spoil, problem) => {
    const spoiled = spoil(body());
    expect(() => parseLoyaltyEvent(spoiled, 'UTC')).toThrow(InvalidEventError);
    expect(() => parseLoyaltyEvent(spoiled, 'UTC')).toThrow(problem);
  });
});
