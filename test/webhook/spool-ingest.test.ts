import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { silentLogger } from '../../src/log/logger.js';
import { EventSpool } from '../../src/webhook/event-spool.js';
import type { LoyaltyEvent } from '../../src/webhook/loyalty-event.js';
import { ingestSpooledEvents } from '../../src/webhook/spool-ingest.js';
import { duckdbTestDestination } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

function event(n: number): LoyaltyEvent {
  return {
    event_key: `key-${n}`,
    event_trigger: 'LOYALTY_POINT_UPDATED',
    origin_source: 'POS',
    country_iso: 'GR',
    customer_id: `C${String(n).padStart(6, '0')}`,
    phone: '3069000',
    tier_name: 'Gold',
    tier_order: 3,
    points: '12.5000',
    cumulative_credit: null,
    point_expiry: '2025-01-01T00:00:00.000Z',
    payload: JSON.stringify({ n, note: `it's "${n}"` }),
  };
}

/** Receives events 1..n into a fresh spool, a second apart from 08:00, the way the receiver does. */
async function spoolOf(n: number, dir = join(testTempDir('spool-'), 'warehouse.events')): Promise<EventSpool> {
  const spool = new EventSpool(dir);
  await spool.prepare();
  for (let i = 1; i <= n; i++)
    await spool.append({
      receivedAt: new Date(Date.UTC(2024, 2, 21, 8, 0, i)).toISOString(),
      receiverId: 'receiver-a',
      event: event(i),
    });
  return spool;
}

const readEvents = (destination: Destination) =>
  destination.withConnection((conn) =>
    conn.all<{ seq: string; event_key: string; received_at: string; _run_id: string; points: string; payload: string }>(
      `SELECT CAST(seq AS VARCHAR) AS seq, event_key, CAST(received_at AS VARCHAR) AS received_at, _run_id, CAST(points AS VARCHAR) AS points, CAST(payload AS VARCHAR) AS payload FROM loyalty_events ORDER BY loyalty_events.seq`,
    ),
  );

describe('the webhook spool, ingested by a run into a DuckDB warehouse', () => {
  it('stores every spooled event once, numbered in the order received, then empties the spool', async () => {
    const { config } = await duckdbTestDestination.fresh();
    const spool = await spoolOf(5);
    // a redelivery of event 2, received later: the same event, stored once
    await spool.append({ receivedAt: '2024-03-21T09:00:00.000Z', receiverId: 'receiver-a', event: event(2) });
    await withWarehouse(config, async (_conn, destination) => {
      expect(await ingestSpooledEvents(destination, spool, silentLogger)).toEqual({
        stored: 5,
        duplicates: 1,
        unreadable: 0,
        quarantined: 0,
      });
      const rows = await readEvents(destination);
      expect(rows.map((r) => [r.seq, r.event_key, r.received_at, r._run_id])).toEqual(
        [1, 2, 3, 4, 5].map((n) => [String(n), `key-${n}`, `2024-03-21 08:00:0${n}+00`, 'receiver-a']),
      );
      expect(JSON.parse(rows[0]!.payload)).toEqual({ n: 1, note: `it's "1"` });
      expect(rows[0]!.points).toBe('12.5000');
      expect(await spool.pending()).toEqual([]);

      // a later ingest numbers after them, and finds a redelivery of an ingested event stored already
      await spool.append({ receivedAt: '2024-03-22T08:00:00.000Z', receiverId: 'receiver-b', event: event(6) });
      await spool.append({ receivedAt: '2024-03-22T08:00:01.000Z', receiverId: 'receiver-b', event: event(3) });
      expect(await ingestSpooledEvents(destination, spool, silentLogger)).toEqual({
        stored: 1,
        duplicates: 1,
        unreadable: 0,
        quarantined: 0,
      });
      expect((await readEvents(destination)).map((r) => [r.seq, r.event_key])).toEqual([
        ...[1, 2, 3, 4, 5].map((n) => [String(n), `key-${n}`]),
        ['6', 'key-6'],
      ]);
    });
  });

  it('loses nothing to a run killed before its commit, and stores nothing twice after one killed between its commit and the clean-up', async () => {
    const { config } = await duckdbTestDestination.fresh();
    const spool = await spoolOf(30);
    const copy = `${spool.dir}-as-it-was`;
    cpSync(spool.dir, copy, { recursive: true });
    await withWarehouse(config, async (_conn, destination) => {
      // killed before the commit: the transaction rolls back and the files stay
      const crashing: Destination = Object.create(destination, {
        ledgerTransaction: {
          value: (fn: Parameters<Destination['ledgerTransaction']>[0]) =>
            destination.ledgerTransaction(async (conn) => (await fn(conn), Promise.reject(new Error('killed')))),
        },
      });
      await expect(ingestSpooledEvents(crashing, spool, silentLogger)).rejects.toThrow('killed');
      expect(await readEvents(destination)).toEqual([]);
      expect(await spool.pending()).toHaveLength(30);

      expect(await ingestSpooledEvents(destination, spool, silentLogger)).toEqual({
        stored: 30,
        duplicates: 0,
        unreadable: 0,
        quarantined: 0,
      });
      // killed after the commit, before the files were deleted: they are all still there at the next run
      rmSync(spool.dir, { recursive: true });
      cpSync(copy, spool.dir, { recursive: true });
      expect(await ingestSpooledEvents(destination, spool, silentLogger)).toEqual({
        stored: 0,
        duplicates: 30,
        unreadable: 0,
        quarantined: 0,
      });
      const rows = await readEvents(destination);
      expect(rows.map((r) => r.event_key)).toEqual(Array.from({ length: 30 }, (_, i) => `key-${i + 1}`));
      expect(await spool.pending()).toEqual([]);
    });
  });

  it('moves a file that holds no event aside, says so, and ingests the others', async () => {
    const { config } = await duckdbTestDestination.fresh();
    const spool = await spoolOf(2);
    writeFileSync(
      join(spool.dir, 'ready', '000000000000001-1-000000001-aaaaaa.json'),
      '{"receivedAt":"2024-03-21T08:00:00.000Z","event":{"customer_',
    );
    const logged: string[] = [];
    const logger = Object.assign(Object.create(silentLogger), {
      error: (_: unknown, msg: string) => logged.push(msg),
      info: () => undefined,
    });
    await withWarehouse(config, async (_conn, destination) => {
      expect(await ingestSpooledEvents(destination, spool, logger)).toEqual({
        stored: 2,
        duplicates: 0,
        unreadable: 1,
        quarantined: 0,
      });
      expect((await readEvents(destination)).map((r) => r.event_key)).toEqual(['key-1', 'key-2']);
    });
    expect(logged).toEqual(['a spooled webhook file holds no loyalty event; moved aside, not ingested']);
    expect(readdirSync(spool.unreadableDir)).toEqual(['000000000000001-1-000000001-aaaaaa.json']);
    expect(await spool.pending()).toEqual([]);
  });

  it('a receiver killed while writing leaves no half-written event to ingest', async () => {
    const spool = await spoolOf(1);
    // what a write cut off before its rename leaves: a partial file in incoming/, never in ready/
    writeFileSync(join(spool.dir, 'incoming', '000000000000002-99-000000001-bbbbbb.json'), '{"receivedAt":"2024-03-2');
    expect(await spool.pending()).toHaveLength(1);
    const { config } = await duckdbTestDestination.fresh();
    const destination = await openDestination(config);
    try {
      expect(await ingestSpooledEvents(destination, spool, silentLogger)).toEqual({
        stored: 1,
        duplicates: 0,
        unreadable: 0,
        quarantined: 0,
      });
    } finally {
      await destination.close();
    }
  });
});
