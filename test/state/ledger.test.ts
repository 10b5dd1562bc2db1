import { afterEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { columnLists } from '../../src/load/warehouse/values-list.js';
import { planWindows } from '../../src/plan/windows.js';
import { ensureWindowRows, recordWindowsDone } from '../../src/state/ledger.js';
import { testDestinations } from '../helpers/destinations.js';

interface LedgerRow {
  window_start: string;
  window_end: string;
  status: string;
  rows_extracted: string;
  rows_loaded: string;
  rows_rejected: string;
  requests: string;
}

describe.each(testDestinations)('the window ledger on $name', (target) => {
  const open: Destination[] = [];
  afterEach(async () => {
    for (const d of open.splice(0)) await d.close();
  });

  async function warehouse(): Promise<Destination> {
    const { config } = await target.fresh();
    const destination = await openDestination(config);
    open.push(destination);
    return destination;
  }

  function rows(destination: Destination): Promise<LedgerRow[]> {
    return destination.withConnection((conn) =>
      conn.all<LedgerRow>(
        `SELECT CAST(window_start AS VARCHAR) AS window_start, CAST(window_end AS VARCHAR) AS window_end, status,
                CAST(rows_extracted AS VARCHAR) AS rows_extracted, CAST(rows_loaded AS VARCHAR) AS rows_loaded,
                CAST(rows_rejected AS VARCHAR) AS rows_rejected, CAST(requests AS VARCHAR) AS requests
           FROM ${conn.schemaSql}._etl_windows WHERE job = 'j' AND stream = 's' ORDER BY window_start`,
      ),
    );
  }

  it('records every window of a batch larger than one statement, each with its own bounds and counts', async () => {
    const destination = await warehouse();
    // more windows than one statement takes, a week long each but the last, cut short
    const windows = planWindows('2000-01-01', '2040-12-31', 7).slice(0, 1201);
    windows[1200] = { start: windows[1200]!.start, end: windows[1200]!.start };
    await destination.ledgerTransaction((conn) => ensureWindowRows(conn, 'j', 's', windows, 'run-1'));
    expect((await rows(destination)).map((r) => [r.window_start, r.window_end, r.status])).toEqual(
      windows.map((w) => [w.start, w.end, 'pending']),
    );
    // counts beyond 32 bits, and each window's own
    const counts = windows.map((window, i) => ({
      window,
      extracted: 2 ** 40 + i,
      loaded: i,
      rejected: i % 3,
      requests: 1200 - i,
    }));
    await destination.ledgerTransaction((conn) =>
      recordWindowsDone(conn, 'j', 's', 'run-1', '2024-05-01T00:00:00.000Z', counts),
    );
    expect(await rows(destination)).toEqual(
      counts.map((c) => ({
        window_start: c.window.start,
        window_end: c.window.end,
        status: 'done',
        rows_extracted: String(c.extracted),
        rows_loaded: String(c.loaded),
        rows_rejected: String(c.rejected),
        requests: String(c.requests),
      })),
    );
    // a window asked for again with a later end is pending again; the others stay done
    const longer = { start: windows[1200]!.start, end: '2023-01-10' };
    await destination.ledgerTransaction((conn) => ensureWindowRows(conn, 'j', 's', [windows[0]!, longer], 'run-2'));
    const after = await rows(destination);
    expect(after[0]!.status).toBe('done');
    expect([after[1200]!.window_end, after[1200]!.status]).toEqual(['2023-01-10', 'pending']);
  });
});

describe('columns bound as lists', () => {
  it('takes dates and integers, and refuses a value whose text could split or mean another', () => {
    expect(
      columnLists(
        [
          ['2024-01-01', 3],
          ['2024-01-02', 2n ** 40n],
        ],
        ['DATE', 'BIGINT'],
        4,
      ),
    ).toEqual({
      sql: "(SELECT unnest(CAST(string_to_array($4, ',') AS DATE[])), unnest(CAST(string_to_array($5, ',') AS BIGINT[])))",
      params: ['2024-01-01,2024-01-02', `3,${2n ** 40n}`],
    });
    expect(() => columnLists([['2024-01-01,2024-01-02']], ['DATE'], 1)).toThrow(/is no DATE/);
    expect(() => columnLists([[null]], ['DATE'], 1)).toThrow(/is no DATE/);
    expect(() => columnLists([[1.5]], ['BIGINT'], 1)).toThrow(/is no BIGINT/);
    expect(() => columnLists([['7']], ['BIGINT'], 1)).toThrow(/is no BIGINT/);
    expect(() => columnLists([], ['DATE'], 1)).toThrow(/no rows/);
  });
});
