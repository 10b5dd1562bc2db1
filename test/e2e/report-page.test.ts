import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CommandError, ExitCode } from '../../src/commands/exit-codes.js';
import { backfillCommand } from '../../src/commands/backfill.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { Emulator } from '../../src/emulator/index.js';
import { planWindows } from '../../src/plan/windows.js';
import { readReportModel } from '../../src/report/read-report-model.js';
import type { ReportModel } from '../../src/report/report-model.js';
import { launchChromium, openWatched } from '../helpers/browser.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { duckdbTestDestination, testDestinations, type TestDestination } from '../helpers/destinations.js';
import { captureStdout } from '../helpers/stdout.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-05-01';
const TO = '2024-05-14';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'] as const;
const DAYS = planWindows(FROM, TO, 1).map((w) => w.start);
/** What the warehouse built below holds, per day, for surveys and postings: two loaded ranges, a gap between them, a failed night, and the last day not reached. */
const EXPECTED = DAYS.map((day) =>
  day <= '2024-05-06' || (day >= '2024-05-09' && day <= '2024-05-12')
    ? 'done'
    : day === '2024-05-13'
      ? 'failed'
      : 'missing',
);
/** Accounts have no gap: the second backfill loads the customer directory up to its first day, 7 and 8 May included. */
const EXPECTED_ACCOUNTS = DAYS.map((day) =>
  day <= '2024-05-12' ? 'done' : day === '2024-05-13' ? 'failed' : 'missing',
);
const expectedOf = (stream: string) => (stream === 'accounts' ? EXPECTED_ACCOUNTS : EXPECTED);
const FAILED_INDEX = DAYS.indexOf('2024-05-13');
const GAP_INDEX = DAYS.indexOf('2024-05-07');
const QUICK = { backoff_base_ms: 5, backoff_max_ms: 20 };

/**
 * Builds the warehouse through the real pipeline: backfills of 1–6 May and 9–12 May (7 and 8 May loaded for accounts alone, as the directory),
 * then 13 May with the source down (every window of that night fails).
 */
async function buildWarehouse(
  emulator: Emulator,
  target: TestDestination,
): Promise<{ config: DestinationSettings; file: string }> {
  const { config } = await target.fresh();
  const file = emulatorJobs({
    url: emulator.url,
    timezone: TZ,
    firstDay: FROM,
    destination: config,
    streams: [...STREAMS],
    pageSize: 20,
    sourceKeys: QUICK,
    postings: '    postings:\n      max_span_days: 31\n',
  });
  const quiet = async (from: string, to: string) =>
    (await captureStdout(() => backfillCommand({ config: file, from, to }))).error;
  expect(await quiet(FROM, '2024-05-06')).toBeUndefined();
  expect(await quiet('2024-05-09', '2024-05-12')).toBeUndefined();
  emulator.faults.set({ downAfter: 0 });
  const down = await quiet('2024-05-13', '2024-05-13');
  emulator.faults.set({});
  expect((down as CommandError).exitCode).toBe(ExitCode.windowsFailed);
  return { config, file };
}

function readModel(config: DestinationSettings, file: string): Promise<ReportModel> {
  const jobConfig = loadConfig(file).jobs.nightly!;
  return withWarehouse(config, (conn) =>
    readReportModel(conn, {
      job: 'nightly',
      jobConfig,
      schema: config.schema,
      warehouse: config.type,
      timezone: TZ,
      through: TO,
    }),
  );
}

describe.each(testDestinations)('the status page model on $name', (target) => {
  const emulator = useEmulator({
    seed: 27,
    accounts: 60,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    badRecordRate: 0.08,
    port: 0,
  });

  it('holds every window of every stream with its status, counts and error, the lag, rejects by day and reason, runs, backfills and table sizes', async () => {
    const { config, file } = await buildWarehouse(emulator, target);
    const model = await readModel(config, file);

    expect(model.streams.map((s) => s.stream)).toEqual(STREAMS);
    for (const s of model.streams) {
      expect(
        s.windows.map((w) => w.start),
        s.stream,
      ).toEqual(DAYS);
      expect(
        s.windows.map((w) => w.status),
        s.stream,
      ).toEqual(expectedOf(s.stream));
      expect(s.windows[FAILED_INDEX]!.error, s.stream).toMatch(/503|not loaded/);
      if (s.stream === 'accounts')
        expect(s).toMatchObject({ completeThrough: '2024-05-12', lagDays: 2, gaps: 0, windowsFailed: 1 });
      else expect(s).toMatchObject({ completeThrough: '2024-05-06', lagDays: 8, gaps: 2, windowsFailed: 1 });
    }
    // a window's counts are what the source served that day
    const accounts = model.streams[0]!;
    for (const w of accounts.windows.filter((x) => x.status === 'done')) {
      const rejects = [...emulator.truth.rejects('accounts', w.start, w.end)].length;
      expect({ day: w.start, loaded: w.loaded, rejected: w.rejected, extracted: w.extracted }).toEqual({
        day: w.start,
        loaded: [...emulator.truth.accounts(w.start, w.end)].length,
        rejected: rejects,
        extracted: w.loaded + rejects,
      });
    }
    expect(accounts.windows.reduce((n, w) => n + w.requests, 0)).toBe(accounts.requests);
    expect(accounts.requests).toBeGreaterThan(0);

    for (const stream of ['accounts', 'surveys'] as const) {
      const loadedDays = DAYS.filter((_, i) => expectedOf(stream)[i] === 'done');
      const truth = new Map(loadedDays.map((d) => [d, [...emulator.truth.rejects(stream, d, d)].length]));
      const shown = new Map(model.rejectDays.filter((r) => r.stream === stream).map((r) => [r.day, r.count]));
      for (const [day, n] of truth) expect(shown.get(day) ?? 0, `${stream} ${day}`).toBe(n);
      expect([...shown.values()].reduce((a, b) => a + b, 0)).toBe([...truth.values()].reduce((a, b) => a + b, 0));
    }
    // the malformed records without a key: those with one load, their bad field NULL
    const total = model.rejectDays.reduce((n, r) => n + r.count, 0);
    expect(total).toBeGreaterThan(2);
    expect(model.rejectReasons.length).toBeGreaterThan(1);
    expect(model.rejectReasons.map((r) => r.count)).toEqual(
      [...model.rejectReasons.map((r) => r.count)].sort((a, b) => b - a),
    );
    for (const r of model.rejectReasons) {
      expect(r.reason).not.toMatch(/"[^"…]+"/); // the quoted value is blanked, so one defect is one reason
      expect(() => JSON.parse(r.example.payload)).not.toThrow();
      expect(DAYS).toContain(r.example.windowStart);
    }

    expect(model.runs.map((r) => [r.command, r.status])).toEqual([
      ['backfill --from 2024-05-13 --to 2024-05-13', 'failed'],
      ['backfill --from 2024-05-09 --to 2024-05-12', 'succeeded'],
      ['backfill --from 2024-05-01 --to 2024-05-06', 'succeeded'],
    ]);
    expect(model.backfills[0]).toMatchObject({
      from: '2024-05-13',
      to: '2024-05-13',
      status: 'open',
      windowsTotal: 3,
      windowsFailed: 3,
      windowsDone: 0,
    });
    const counts = await withWarehouse(config, async (conn) => {
      const [row] = await conn.all<{ a: number | string; w: number | string }>(
        'SELECT (SELECT COUNT(*) FROM accounts) AS a, (SELECT COUNT(*) FROM _etl_windows) AS w',
      );
      return { accounts: Number(row!.a), _etl_windows: Number(row!.w) };
    });
    expect(model.tables.find((t) => t.table === 'accounts')?.rows).toBe(counts.accounts);
    expect(model.tables.find((t) => t.table === '_etl_windows')?.rows).toBe(counts._etl_windows);
    expect(model.tables.findIndex((t) => t.table.startsWith('_'))).toBeGreaterThan(
      model.tables.findIndex((t) => t.table === 'loyalty_postings'),
    );
  });
});

describe('the status page in Chromium (DuckDB)', () => {
  const emulator = useEmulator({
    seed: 27,
    accounts: 60,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    badRecordRate: 0.08,
    port: 0,
  });

  it('draws a cell per window in its status colour, shows a window on hover and click, shows hostile payloads as text, and logs no error', async () => {
    const { config, file } = await buildWarehouse(emulator, duckdbTestDestination);
    const model = await readModel(config, file);
    // a payload and an error as hostile as source data can be, frequent enough to be among the reasons shown
    const hostile = {
      payload: '{"first":"</script><script>window.__pwned=1</script>"}',
      error: 'first: <img src=x onerror="window.__pwned=2"> is not a name',
    };
    await withWarehouse(config, (conn) =>
      conn.run(
        `INSERT INTO _etl_rejects (job, run_id, stream, window_start, payload, error, rejected_at) SELECT 'nightly', 'r', 'accounts', DATE '2024-05-02', $1, $2, now() FROM range(50)`,
        [hostile.payload, hostile.error],
      ),
    );

    const dir = testTempDir('report-');
    const page = join(dir, 'status.html');
    // the records themselves only when asked: they hold customer data
    const cli = await runCli(['report', '--config', file, '--until', TO, '--output', page, '--reject-payloads']);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(
      new RegExp(`^report written to .*status\\.html: ${DAYS.length * 3} windows, \\d+ KB\\n$`),
    );

    const browser = await launchChromium();
    try {
      const url = `file://${page}`;
      const { page: tab, problems, requests } = await openWatched(browser, url);
      for (const s of model.streams) {
        const cells = tab.locator(`svg.cal[data-stream="${s.stream}"] g.cells rect`);
        expect(await cells.count(), s.stream).toBe(DAYS.length);
        const classes = await cells.evaluateAll((els) => els.map((el) => el.getAttribute('class')));
        const expected = s.windows.map((w) =>
          w.status === 'failed' ? 'f' : w.status === 'missing' ? 'm' : w.rejected > 0 ? 'r' : 'd',
        );
        expect(
          classes.map((c) => c!.replace(/^r\d$/, 'r')),
          s.stream,
        ).toEqual(expected);
        // browser-side code as text: the test program is compiled without the DOM's types
        const fills = await tab.evaluate<string[]>(
          `[...document.querySelectorAll('svg.cal[data-stream="${s.stream}"] g.cells rect')].map((el) => getComputedStyle(el).fill)`,
        );
        expect(fills[FAILED_INDEX], `${s.stream}: the failed night is red`).toBe('rgb(207, 34, 46)');
        if (s.stream !== 'accounts')
          expect(fills[GAP_INDEX], `${s.stream}: the gap is grey`).toBe('rgb(208, 215, 222)');
        expect(fills[0], `${s.stream}: a loaded night is green (or amber with rejects)`).toMatch(
          /^rgb\((45, 164, 78|141, 184, 58|212, 167, 44|225, 111, 36)\)$/,
        );
      }
      const withRejects = model.streams[0]!.windows.findIndex((w) => w.rejected > 0);
      expect(withRejects).toBeGreaterThanOrEqual(0);

      // hover: the failed night's counts and error; click: they stay below the calendar
      const accountsCells = tab.locator('svg.cal[data-stream="accounts"] g.cells rect');
      await accountsCells.nth(FAILED_INDEX).hover();
      const tip = await tab.locator('.tip').innerText();
      expect(tip).toContain('accounts: 2024-05-13');
      expect(tip).toContain('status: failed');
      expect(tip).toMatch(/error: accounts 2024-05-13.*503/);
      const shown = model.streams[0]!.windows[withRejects]!;
      await accountsCells.nth(withRejects).click();
      const detail = await tab.locator('section[data-stream="accounts"] .detail').innerText();
      expect(detail).toContain(`accounts: ${shown.start}`);
      expect(detail).toContain(`records: ${shown.extracted} read, ${shown.loaded} loaded, ${shown.rejected} rejected`);
      expect(detail).toContain(`requests: ${shown.requests}`);

      expect(await tab.locator('.banner.bad').innerText()).toContain(
        'surveys: 1 failed window; 2 gaps (windows never loaded, later ones were); complete through 2024-05-06, 8 days behind',
      );
      expect(await tab.locator('.card[data-stream="surveys"]').innerText()).toMatch(/2024-05-06\s+8 days behind/);

      // the hostile reject shows as text, and nothing of it runs
      await tab.evaluate(`document.querySelectorAll('table.reasons details').forEach((d) => { d.open = true; })`);
      const reasons = await tab.locator('table.reasons').innerText();
      expect(reasons).toContain('</script><script>window.__pwned=1</script>');
      expect(reasons).toContain(hostile.error);
      expect(await tab.locator('table.reasons img, table.reasons script').count()).toBe(0);
      expect(await tab.evaluate('typeof window.__pwned')).toBe('undefined');

      const screenshot = join(dir, 'report.png');
      await tab.screenshot({ path: screenshot, fullPage: true });
      expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe('PNG');
      expect(statSync(screenshot).size).toBeGreaterThan(20_000);
      expect(problems).toEqual([]);
      expect(requests).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
