import { hash32 } from '../faults/request-dice.js';

/** Record types that carry members the spec does not list under the `unlistedFields` reading. */
export type UnlistedRecordType = 'account' | 'surveyAnswer' | 'posting' | 'loyalty' | 'voucher';

/** The members each record type gains under `unlistedFields: true`, in the order they are added. */
export const UNLISTED_FIELDS: Readonly<Record<UnlistedRecordType, readonly string[]>> = Object.freeze({
  account: ['segment', 'marketingOptIn', 'visits'],
  surveyAnswer: ['channel', 'durationSeconds'],
  posting: ['channel', 'campaign'],
  loyalty: ['membershipId', 'pendingCredit'],
  voucher: ['campaign', 'minimumSpend'],
});

const SEGMENTS = ['regular', 'vip', 'staff', 'new'] as const;
const CHANNELS = ['kiosk', 'web', 'sms'] as const;

/**
 * The unlisted members of one record, a function of the record's own content (`identity`: the customer id of an
 * account or loyalty state, the customer and time of an answer, the receipt and time of a posting, a voucher's
 * code), so tests can tell what a warehouse must keep of them. Values are of several JSON types: text,
 * boolean, number, null and an object.
 *
 * @example unlistedMembers('voucher', 'V-1234') // { campaign: 'spring-2', minimumSpend: 15 }
 */
export function unlistedMembers(type: UnlistedRecordType, identity: string): Record<string, unknown> {
  const h = hash32(`${type} ${identity}`);
  switch (type) {
    case 'account':
      return { segment: SEGMENTS[h % SEGMENTS.length], marketingOptIn: (h >>> 3) % 2 === 0, visits: (h >>> 5) % 40 };
    case 'surveyAnswer':
      return { channel: CHANNELS[h % CHANNELS.length], durationSeconds: 20 + ((h >>> 4) % 300) };
    case 'posting':
      return {
        channel: (h & 1) === 0 ? 'POS' : 'ONLINE',
        campaign: (h >>> 1) % 3 === 0 ? null : { id: (h >>> 3) % 90, name: `promo-${(h >>> 3) % 90}` },
      };
    case 'loyalty':
      return { membershipId: `M-${String(h % 1_000_000).padStart(6, '0')}`, pendingCredit: ((h >>> 6) % 5000) / 100 };
    case 'voucher':
      return { campaign: `spring-${h % 5}`, minimumSpend: 5 * ((h >>> 4) % 10) };
  }
}
