import { describe, expect, it } from 'vitest';
import type { JobSettings } from '../../src/plan/job-plan.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';
import { readReportModel } from '../../src/report/read-report-model.js';
import { renderReportPage } from '../../src/report/render-page.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const FIRST = '2021-01-01';
const LAST = '2024-12-31';
const DAYS = 1461;
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'] as const;
const JOB: JobSettings = {
  streams: [...STREAMS],
  window_days: 1,
  lookback_days: 0,
  first_day: FIRST,
  reject_threshold: 0.05,
  sweep_days: 7,
  postings: { customers: 'all', max_span_days: 31 },
};
/** Days (counted from the first) the ledger below leaves out, and those it records as failed. */
const GAP = { from: 400, to: 406 };
const failedDay = (n: number) => n % 97 === 5 && (n < GAP.from || n > GAP.to);

/**
 * Four years of nightly windows of three streams, as the ledger of a warehouse that ran that long holds them:
 * written straight into the pipeline's tables, since loading four years through the pipeline takes minutes and
 * the page reads nothing else. A week is missing, every 97th night failed, and 20,000 records are rejected for
 * five defects, each naming its bad value.
 */
async function writeYearsOfLedger(conn: SqlConnection): Promise<void> {
  const days = `(SELECT CAST(g.d AS DATE) AS day, CAST(g.d AS DATE) - DATE '${FIRST}' AS n FROM generate_series(CAST('${FIRST}' AS TIMESTAMP), CAST('${LAST}' AS TIMESTAMP), INTERVAL '1 day') AS g(d)) AS days`;
  for (const stream of STREAMS) {
    await conn.run(
      `INSERT INTO _etl_windows (job, stream, window_start, window_end, status, rows_extracted, rows_loaded, rows_rejected, requests, run_id, finished_at, error)
       SELECT 'nightly', $1, day, day, CASE WHEN n % 97 = 5 THEN 'failed' ELSE 'done' END, 1200 + n % 13, 1200, n % 13, 3, 'run-' || CAST(n AS VARCHAR),
              CAST(day AS TIMESTAMP) + INTERVAL '26 hours', CASE WHEN n % 97 = 5 THEN 'page 1: HTTP 503 (gave up after 6 attempts)' END
         FROM ${days} WHERE n < ${GAP.from} OR n > ${GAP.to}`,
      [stream],
    );
  }
  await conn.run(
    `INSERT INTO _etl_watermarks (job, stream, complete_through, updated_at, run_id) SELECT 'nightly', s, DATE '2022-02-04', now(), 'run-399' FROM (SELECT 'accounts' AS s UNION ALL SELECT 'surveys' UNION ALL SELECT 'loyalty_postings') AS streams`,
  );
  await conn.run(
    `INSERT INTO _etl_runs (run_id, job, command, started_at, finished_at, status, error, requests)
     SELECT 'run-' || CAST(n AS VARCHAR), 'nightly', 'run', CAST(day AS TIMESTAMP) + INTERVAL '26 hours', CAST(day AS TIMESTAMP) + INTERVAL '26 hours 3 minutes', 'succeeded', NULL, 9 FROM ${days}`,
  );
  await conn.run(
    `INSERT INTO _etl_rejects (job, run_id, stream, window_start, payload, error, rejected_at)
     SELECT 'nightly', 'run-1', CASE WHEN i % 2 = 0 THEN 'accounts' ELSE 'surveys' END, DATE '${FIRST}' + CAST(i % ${DAYS} AS INTEGER),
            '{"birthdate":"' || CAST(i AS VARCHAR) || '"}', 'defect ' || CAST(i % 5 AS VARCHAR) || ': not a date: "' || CAST(i AS VARCHAR) || '"', now()
       FROM generate_series(1, 20000) AS g(i)`,
  );
}

describe.each(testDestinations)('a status page of four years of nightly windows on $name', (target) => {
  it('holds every window, the gap, the failed nights, the rejects grouped by defect, and stays under a megabyte', async () => {
    const { config } = await target.fresh();
    const model = await withWarehouse(config, async (conn) => {
      await writeYearsOfLedger(conn);
      return readReportModel(conn, {
        job: 'nightly',
        jobConfig: JOB,
        schema: config.schema,
        warehouse: config.type,
        timezone: 'UTC',
        through: LAST,
      });
    });
    const failed = Array.from({ length: DAYS }, (_, n) => n).filter(failedDay).length;
    for (const s of model.streams) {
      expect(s.windows).toHaveLength(DAYS);
      expect(s.windows.filter((w) => w.status === 'failed')).toHaveLength(failed);
      expect(s.windows.filter((w) => w.status === 'missing').map((w) => w.start)).toEqual([
        '2022-02-05',
        '2022-02-06',
        '2022-02-07',
        '2022-02-08',
        '2022-02-09',
        '2022-02-10',
        '2022-02-11',
      ]);
      expect(s).toMatchObject({ gaps: 7, windowsFailed: failed, completeThrough: '2022-02-04', lagDays: 1061 });
    }
    expect(model.rejectDays.reduce((n, d) => n + d.count, 0)).toBe(20_000);
    expect(model.rejectReasons.map((r) => [r.stream, r.reason, r.count])).toEqual(
      [0, 1, 2, 3, 4]
        .flatMap((k) => [
          ['accounts', `defect ${k}: not a date: "…"`, 2000],
          ['surveys', `defect ${k}: not a date: "…"`, 2000],
        ])
        .sort((a, b) => (`${a[0]}${a[1]}` < `${b[0]}${b[1]}` ? -1 : 1)),
    );
    expect(model.runs).toHaveLength(20);

    const page = renderReportPage(model);
    const cells = page
      .split('<g class="cells">')
      .slice(1)
      .map((svg) => svg.split('</g>')[0]!.match(/<rect /g)!.length);
    expect(cells).toEqual([DAYS, DAYS, DAYS]);
    expect(Buffer.byteLength(page)).toBeLessThan(1_000_000);
  });
});
