import { describe, expect, it } from 'vitest';
import { advanceEventBookmark, lastEventSeq, readEventBookmark } from '../../src/state/event-bookmark.js';
import { advanceWatermark, recordWindowsDone } from '../../src/state/ledger.js';
import type { LoyaltyEvent } from '../../src/webhook/loyalty-event.js';
import { insertLoyaltyEvent } from '../../src/webhook/loyalty-event-store.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';

function event(n: number): LoyaltyEvent {
  return {
    event_key: `key-${n}`,
    event_trigger: 'LOYALTY_POINT_UPDATED',
    origin_source: 'POS',
    country_iso: 'GR',
    customer_id: `C00000${n}`,
    phone: null,
    tier_name: 'Bronze',
    tier_order: 1,
    points: '1.0000',
    cumulative_credit: '1.0000',
    point_expiry: null,
    payload: `{"n":${n}}`,
  };
}

describe.each(testDestinations)('the webhook bookmark in $name', (target) => {
  it('moves past the events received before the end of the watermark day, never past a later one, never backwards', async () => {
    const { config } = await target.fresh();
    await withWarehouse(config, async (conn) => {
      // Events 1-3 on 2024-03-21 (Athens), 4 just after its midnight, 5 on the 22nd; 6 arrives after the span chose.
      const received = [
        '2024-03-21T08:00:00Z',
        '2024-03-21T12:00:00Z',
        '2024-03-21T21:59:59Z',
        '2024-03-21T22:00:00Z',
        '2024-03-22T09:00:00Z',
        '2024-03-22T10:00:00Z',
      ];
      for (const [i, at] of received.slice(0, 5).entries())
        expect(
          await insertLoyaltyEvent(conn, event(i + 1), {
            runId: 'r',
            now: () => new Date(at),
            exclusive: target.name === 'postgres',
          }),
        ).toBe('stored');
      expect(await insertLoyaltyEvent(conn, event(2), { runId: 'r', now: () => new Date(), exclusive: false })).toBe(
        'duplicate',
      );
      const askedThrough = await lastEventSeq(conn);
      expect(askedThrough).toBe(5);
      await insertLoyaltyEvent(conn, event(6), { runId: 'r', now: () => new Date(received[5]!), exclusive: false });

      const window = { start: '2024-03-21', end: '2024-03-21' };
      await recordWindowsDone(conn, 'nightly', 'loyalty_postings', 'run-1', '2024-03-22T01:00:00Z', [
        { window, extracted: 0, loaded: 0, rejected: 0, requests: 0 },
      ]);
      await advanceWatermark(conn, 'nightly', 'loyalty_postings', '2024-03-21', 'run-1', '2024-03-22T01:00:00Z');
      const advance = (through: number) =>
        advanceEventBookmark(conn, {
          job: 'nightly',
          stream: 'loyalty_postings',
          askedThrough: through,
          timezone: TZ,
          runId: 'run-1',
          now: '2024-03-22T01:00:00Z',
        });
      await conn.transaction(() => advance(askedThrough));
      expect(await readEventBookmark(conn, 'nightly', 'loyalty_postings')).toBe(3); // 4 was received on the 22nd in Athens

      await conn.transaction(() => advance(2)); // an older span committing late
      expect(await readEventBookmark(conn, 'nightly', 'loyalty_postings')).toBe(3);

      await recordWindowsDone(conn, 'nightly', 'loyalty_postings', 'run-2', '2024-03-23T01:00:00Z', [
        { window: { start: '2024-03-22', end: '2024-03-22' }, extracted: 0, loaded: 0, rejected: 0, requests: 0 },
      ]);
      await advanceWatermark(conn, 'nightly', 'loyalty_postings', '2024-03-21', 'run-2', '2024-03-23T01:00:00Z');
      await conn.transaction(() => advance(askedThrough));
      expect(await readEventBookmark(conn, 'nightly', 'loyalty_postings')).toBe(5); // 6 was not asked about yet
      expect(await readEventBookmark(conn, 'other-job', 'loyalty_postings')).toBeUndefined();
    });
  });
});
