import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { parseLoyaltyEvent } from '../../src/webhook/loyalty-event.js';
import { insertLoyaltyEvent } from '../../src/webhook/loyalty-event-store.js';
import { testDestinations } from '../helpers/destinations.js';

/** Names that are members of every plain JavaScript object, and the empty one. */
const OBJECT_INTERNALS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '', 'valueOf', '__defineGetter__'];
const anyName = fc.oneof(fc.constantFrom(...OBJECT_INTERNALS), fc.string({ maxLength: 10 }));

/** A JSON object text with these members, written without a plain object (which would drop `__proto__`). */
function objectText(entries: Array<[string, string]>): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
}

/** Extra members for one object of the body: a name and a JSON text, a string or an object of strings. */
const extras = fc.uniqueArray(
  fc.tuple(
    anyName,
    fc.oneof(
      fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
      fc
        .uniqueArray(
          fc.tuple(
            anyName,
            fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
          ),
          { selector: ([n]) => n, maxLength: 3 },
        )
        .map(objectText),
    ),
  ),
  { selector: ([n]) => n, maxLength: 4 },
);

/**
 * A loyalty webhook body with `extra` members in its top level, `origin`, `customer` and `entity`, as text. The
 * members the typed columns read are not among the extras: `origin.source` and `customer.phone` are absent.
 */
function bodyText(extra: {
  top: Array<[string, string]>;
  origin: Array<[string, string]>;
  customer: Array<[string, string]>;
  entity: Array<[string, string]>;
}): string {
  const without = (members: Array<[string, string]>, taken: string[]) => members.filter(([n]) => !taken.includes(n));
  return objectText([
    [
      'origin',
      objectText([['trigger', '"LOYALTY_POINT_UPDATED"'], ...without(extra.origin, ['trigger', 'source', 'country'])]),
    ],
    ['customer', objectText([['accountId', '"C000042"'], ...without(extra.customer, ['accountId', 'phone'])])],
    [
      'entity',
      objectText([
        ['cumulativeCredit', '12.5'],
        ...without(extra.entity, ['cumulativeCredit', 'loyaltyTier', 'wallets', 'pointExpiry']),
      ]),
    ],
    ...without(extra.top, ['origin', 'customer', 'entity', 'generic']),
  ]);
}

/** Every leaf of a JSON value as `path = value`, read with Object.entries (own members, `__proto__` included). */
function leaves(value: unknown, path = ''): string[] {
  if (value === null || typeof value !== 'object') return [`${path} = ${JSON.stringify(value)}`];
  const members = Object.entries(value);
  if (members.length === 0) return [`${path} = {}`];
  return members.flatMap(([name, member]) => leaves(member, `${path}/${JSON.stringify(name)}`)).sort();
}

describe.each(testDestinations)('webhook bodies with members named like object internals, into $name', (target) => {
  let destination: Destination;
  beforeAll(async () => {
    destination = await openDestination((await target.fresh()).config);
  });
  afterAll(async () => destination.close());

  it('stores every member of the body, and no such member takes the place of a typed column', async () => {
    // `__proto__` members that carry what a typed column reads: a body held in plain objects would take them for its own
    const shadowing = {
      top: [],
      origin: [['__proto__', '{"source":"EVIL"}']],
      customer: [['__proto__', '{"phone":"666"}']],
      entity: [['__proto__', '{"cumulativeCredit":"999"}']],
    } as never;
    await fc.assert(
      fc.asyncProperty(fc.record({ top: extras, origin: extras, customer: extras, entity: extras }), async (extra) => {
        const text = bodyText(extra);
        const event = parseLoyaltyEvent(JSON.parse(text), 'UTC');
        const stored = await destination.withConnection(async (conn) => {
          await insertLoyaltyEvent(conn, event, {
            runId: 'keys',
            now: () => new Date(),
            exclusive: destination.capabilities.multiProcess,
          });
          const [row] = await conn.all<{
            payload: string;
            origin_source: string | null;
            phone: string | null;
            cumulative_credit: string | number;
          }>(
            `SELECT CAST(payload AS VARCHAR) AS payload, origin_source, phone, cumulative_credit FROM loyalty_events WHERE event_key = $1`,
            [event.event_key],
          );
          return row!;
        });
        expect(leaves(JSON.parse(stored.payload))).toEqual(leaves(JSON.parse(text)));
        expect(stored.origin_source).toBeNull();
        expect(stored.phone).toBeNull();
        expect(Number(stored.cumulative_credit)).toBe(12.5);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 12), examples: [[shadowing]] },
    );
  });
});
