import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import type { TableSpec } from '../../src/load/table-spec.js';
import { commitWindows } from '../../src/pipeline/load-span.js';
import { testDestinations } from '../helpers/destinations.js';

/**
 * A per-customer state table as a stream that reads each customer's current state would declare it: its history
 * is observed at the instant each row was read (`observed_at`), not by window.
 */
const tierTable: TableSpec = {
  name: 'tier_state',
  key: ['customer_id'],
  merge: { kind: 'upsert' },
  columns: [
    { name: 'customer_id', type: 'text' },
    { name: 'tier', type: 'text' },
    { name: 'observed_at', type: 'timestamptz' },
  ],
  history: { table: 'tier_state_history', observations: '_etl_tier_state_observations', observedAt: 'observed_at' },
};

/** The migration such a stream adds (docs/warehouse.md, "Keeping the history of another table"). */
const DDL = [
  `CREATE TABLE tier_state (customer_id VARCHAR NOT NULL, tier VARCHAR, observed_at TIMESTAMPTZ, _window_start DATE NOT NULL, _run_id VARCHAR NOT NULL, _loaded_at TIMESTAMPTZ NOT NULL)`,
  `CREATE TABLE _etl_tier_state_observations (customer_id VARCHAR NOT NULL, tier VARCHAR, observed_at TIMESTAMPTZ NOT NULL, _window_start DATE NOT NULL,
     content_hash VARCHAR NOT NULL, _run_id VARCHAR NOT NULL, _loaded_at TIMESTAMPTZ NOT NULL)`,
  `CREATE TABLE tier_state_history (customer_id VARCHAR NOT NULL, tier VARCHAR, valid_from TIMESTAMPTZ NOT NULL, valid_to TIMESTAMPTZ, is_current BOOLEAN NOT NULL,
     content_hash VARCHAR NOT NULL, _run_id VARCHAR NOT NULL, _loaded_at TIMESTAMPTZ NOT NULL)`,
];

async function observe(
  destination: Destination,
  day: string,
  rows: Array<{ customer_id: string; tier: string; observed_at: string }>,
): Promise<void> {
  const runId = `run-${day}-${rows.map((r) => r.observed_at).join()}`;
  const window = { start: day, end: day };
  const load = await destination.openSpan({
    job: 'j',
    stream: 'tier_state',
    runId,
    windows: [window],
    tables: [tierTable],
  });
  await load.append(
    'tier_state',
    rows.map((row, i) => ({ seq: i + 1, windowStart: day, row })),
  );
  await commitWindows(
    load,
    { job: 'j', stream: 'tier_state', runId, firstDay: '2024-01-01' },
    [window],
    new Map([[day, rows.length]]),
    1,
  );
}

describe.each(testDestinations)('a history observed by instant, into $name', (target) => {
  let destination: Destination;
  beforeEach(async () => {
    destination = await openDestination((await target.fresh()).config);
    await destination.withConnection(async (conn) => {
      for (const sql of DDL) await conn.run(sql);
    });
  });
  afterEach(async () => destination.close());

  it('versions each change at the instant it was read, whatever order the reads load in; the same read again adds nothing', async () => {
    const read = (at: string, tier: string) => ({ customer_id: 'C1', tier, observed_at: at });
    await observe(destination, '2024-05-03', [read('2024-05-03T08:00:00.000Z', 'Gold')]);
    await observe(destination, '2024-05-01', [read('2024-05-01T08:00:00.000Z', 'Silver')]);
    await observe(destination, '2024-05-02', [read('2024-05-02T08:00:00.000Z', 'Silver')]);
    await observe(destination, '2024-05-02', [read('2024-05-02T08:00:00.000Z', 'Silver')]);
    await observe(destination, '2024-05-04', [read('2024-05-04T08:00:00.000Z', 'Gold')]);
    const versions = await destination.withConnection((conn) =>
      conn.all<{ tier: string; from_s: number | string; to_s: number | string | null; is_current: boolean }>(
        `SELECT tier, EXTRACT(EPOCH FROM valid_from) AS from_s, EXTRACT(EPOCH FROM valid_to) AS to_s, is_current FROM tier_state_history ORDER BY valid_from`,
      ),
    );
    const s = (iso: string) => Date.parse(iso) / 1000;
    expect(
      versions.map((v) => [v.tier, Number(v.from_s), v.to_s === null ? null : Number(v.to_s), v.is_current]),
    ).toEqual([
      ['Silver', s('2024-05-01T08:00:00.000Z'), s('2024-05-03T08:00:00.000Z'), false],
      ['Gold', s('2024-05-03T08:00:00.000Z'), null, true],
    ]);
    const [observations] = await destination.withConnection((conn) =>
      conn.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM _etl_tier_state_observations'),
    );
    expect(Number(observations!.n)).toBe(4);
  });
});
