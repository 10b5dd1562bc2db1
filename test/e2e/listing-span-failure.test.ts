import { describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import type { Emulator, Middleware } from '../../src/emulator/index.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';
import { emulatorJobs } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { readAccounts, readSurveyResponses, sortedByJson, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const RANGE = { startDate: '2024-02-01', endDate: '2024-02-10' } as const;
const BROKEN_DAY = '2024-02-06';
const TZ = 'Europe/Athens';

/** A stream listed by window, and how to compare what the warehouse holds of it with the emulator's truth. */
interface ListingStream {
  stream: 'accounts' | 'surveys';
  path: string;
  /** The target tables that hold a window's rows. */
  tables: string[];
  loaded(conn: SqlConnection): Promise<unknown>;
  truth(emulator: Emulator, start: string, end: string): unknown;
}

const STREAMS: ListingStream[] = [
  {
    stream: 'accounts',
    path: '/business-data/accounts',
    tables: ['accounts', 'account_custom_fields', '_etl_account_windows'],
    loaded: readAccounts,
    truth: (emulator, start, end) =>
      new Map([...emulator.truth.accounts(start, end)].map((a) => [a.customer_id, { ...a }])),
  },
  {
    stream: 'surveys',
    path: '/business-data/surveys',
    tables: ['survey_responses', 'survey_answers'],
    loaded: async (conn) => sortedByJson(await readSurveyResponses(conn)),
    truth: (emulator, start, end) =>
      sortedByJson([...emulator.truth.surveyResponses(start, end)].map((r) => ({ ...r }))),
  },
];

const CASES = STREAMS.flatMap((listing) =>
  testDestinations.map((target) => ({ ...listing, target, name: target.name })),
);

describe.each(CASES)(
  'a $stream span whose sixth window cannot be read, into $name',
  ({ stream, path, tables, loaded, truth, target }) => {
    let broken = true;
    /** The listing of one day answers 500 to every request while `broken`. */
    const breakOneDay: Middleware = async (request, next) => {
      if (broken && request.path === path && request.query.get('start') === BROKEN_DAY) {
        return { status: 500, headers: {}, body: '{"code":500,"message":"Internal server error"}' };
      }
      return next(request);
    };
    const emulator = useEmulator({
      seed: 23,
      accounts: 120,
      ...RANGE,
      timezone: TZ,
      port: 0,
      surveyDuplicateRate: 0.1,
      hooks: { middleware: [breakOneDay] },
    });

    it('commits the five windows read before it, fails it and the four after, and the re-run reaches the ground truth', async () => {
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: RANGE.startDate,
        destination: config,
        streams: [stream],
        pageSize: 5,
        sourceKeys: { retries: 1, backoff_base_ms: 5, backoff_max_ms: 10 },
      });
      // ten 1-day windows in spans of several (a span of a listing holds up to 31 days): the broken day is in the middle of one
      await expect(
        backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '1' }),
      ).rejects.toThrow(new RegExp(`5 window\\(s\\) failed; first: ${stream} ${BROKEN_DAY}`));
      await withWarehouse(config, async (conn) => {
        const windows = await conn.all<{ w: string; status: string; run_id: string }>(
          `SELECT CAST(window_start AS VARCHAR) AS w, status, run_id FROM _etl_windows ORDER BY window_start`,
        );
        expect(windows.map((w) => [w.w, w.status])).toEqual([
          ['2024-02-01', 'done'],
          ['2024-02-02', 'done'],
          ['2024-02-03', 'done'],
          ['2024-02-04', 'done'],
          ['2024-02-05', 'done'],
          ['2024-02-06', 'failed'],
          ['2024-02-07', 'failed'],
          ['2024-02-08', 'failed'],
          ['2024-02-09', 'failed'],
          ['2024-02-10', 'failed'],
        ]);
        // exactly the first five windows' rows, none of the rest (the broken window's pages read before it broke included)
        expect(await loaded(conn)).toEqual(truth(emulator, RANGE.startDate, '2024-02-05'));
        for (const table of tables) {
          const [late] = await conn.all<{ n: number | string }>(
            `SELECT COUNT(*) AS n FROM ${table} WHERE _window_start >= CAST($1 AS DATE)`,
            [BROKEN_DAY],
          );
          expect(Number(late!.n), table).toBe(0);
        }
        const [mark] = await conn.all<{ d: string }>(
          `SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks WHERE stream = $1`,
          [stream],
        );
        expect(mark!.d).toBe('2024-02-05');
      });

      broken = false;
      await backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '1' });
      await withWarehouse(config, async (conn) => {
        expect(await loaded(conn)).toEqual(truth(emulator, RANGE.startDate, RANGE.endDate));
        const statuses = await conn.all<{ status: string }>(`SELECT DISTINCT status FROM _etl_windows`);
        expect(statuses).toEqual([{ status: 'done' }]);
      });
    });
  },
);
