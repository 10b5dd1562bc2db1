import { describe, expect, it } from 'vitest';
import { CommandError, ExitCode } from '../../src/commands/exit-codes.js';
import { backfillCommand } from '../../src/commands/backfill.js';
import { checkCommand } from '../../src/commands/check.js';
import { statusCommand } from '../../src/commands/status.js';
import { verifyCommand } from '../../src/commands/verify.js';
import { WarehouseConfigError } from '../../src/load/warehouse/warehouse-errors.js';
import { planWindows } from '../../src/plan/windows.js';
import type { JobStatus } from '../../src/state/status-report.js';
import { emulatorJobs, runCli, writeJobsFile } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { captureStdout } from '../helpers/stdout.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-05-01';
const TO = '2024-05-12';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'];

describe.each(testDestinations)('verify, check and status on $name', (target) => {
  const emulator = useEmulator({
    seed: 17,
    accounts: 80,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    badRecordRate: 0.03,
    port: 0,
  });

  it('verify is clean after a backfill, finds rows deleted behind its back, and is clean again once those days are re-run', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: STREAMS,
      pageSize: 20,
      postings: '    postings:\n      max_span_days: 31\n',
    });
    await backfillCommand({ config: file, from: FROM, to: TO });
    const clean = await captureStdout(() => verifyCommand({ config: file, from: FROM, to: TO }));
    expect(clean.error).toBeUndefined();
    expect(clean.out).toMatch(/verified 12 window\(s\) × 3 stream\(s\).*: no gaps/);
    await withWarehouse(config, async (conn) => {
      const [rejects] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM _etl_rejects`);
      expect(Number(rejects!.n)).toBeGreaterThan(0); // rejects count as held: the source served them, the warehouse kept them
    });

    // behind the tool's back: one customer seen in a single window, one survey answer record, one posting
    const victims = await withWarehouse(config, async (conn) => {
      const [account] = await conn.all<{ customer_id: string; d: string }>(
        `SELECT customer_id, CAST(MIN(_window_start) AS VARCHAR) AS d FROM _etl_account_windows GROUP BY customer_id HAVING COUNT(*) = 1 ORDER BY customer_id LIMIT 1`,
      );
      const [response] = await conn.all<{ response_id: string; d: string }>(
        `SELECT response_id, CAST(_window_start AS VARCHAR) AS d FROM survey_responses ORDER BY response_id LIMIT 1`,
      );
      const [posting] = await conn.all<{ posting_id: string; d: string }>(
        `SELECT posting_id, CAST(_window_start AS VARCHAR) AS d FROM loyalty_postings ORDER BY posting_id LIMIT 1`,
      );
      await conn.run(`DELETE FROM accounts WHERE customer_id = $1`, [account!.customer_id]);
      await conn.run(`DELETE FROM survey_answers WHERE response_id = $1`, [response!.response_id]);
      await conn.run(`DELETE FROM survey_responses WHERE response_id = $1`, [response!.response_id]);
      await conn.run(`DELETE FROM loyalty_postings WHERE posting_id = $1`, [posting!.posting_id]);
      return { accounts: account!.d, surveys: response!.d, loyalty_postings: posting!.d };
    });
    const gaps = await captureStdout(() => verifyCommand({ config: file, from: FROM, to: TO }));
    expect(gaps.error).toBeInstanceOf(CommandError);
    expect((gaps.error as CommandError).exitCode).toBe(ExitCode.gaps);
    const table = gaps.out.split('\n').filter((l) => /^(accounts|surveys|loyalty_postings)\s/.test(l));
    expect(table).toHaveLength(3);
    for (const [stream, day] of Object.entries(victims))
      expect(
        table.find((l) => l.startsWith(stream)),
        stream,
      ).toMatch(new RegExp(`^${stream}\\s+${day}\\s.*1 missing$`));
    expect(gaps.out).toMatch(/3 with gaps/);

    if (target.name === 'postgres') {
      // the same through the command line (the exit code does not depend on the warehouse): exit 4, one line on stderr
      const cli = await runCli(['verify', '--config', file, '--from', FROM, '--to', TO, '--stream', 'surveys']);
      expect(cli.code).toBe(4);
      expect(
        cli.stderr
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('loyalty-etl: ')),
      ).toEqual([expect.stringMatching(/^loyalty-etl: verify: 1 window\(s\) with gaps; first: surveys /)]);
    }

    // re-running one bad night is a one-day backfill
    for (const day of new Set(Object.values(victims))) await backfillCommand({ config: file, from: day, to: day });
    const again = await captureStdout(() => verifyCommand({ config: file, from: FROM, to: TO }));
    expect(again.error).toBeUndefined();
    expect(again.out).toMatch(/no gaps/);
    // every stream through the command line: one query at a time on a connection, so pg has nothing to warn about
    const quiet = await runCli(['verify', '--config', file, '--from', FROM, '--to', TO]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');

    // a key held twice: DuckDB leaves keys to the merge (PostgreSQL refuses the row), so verify checks them there
    const doubled = await withWarehouse(config, async (conn) => {
      const [row] = await conn.all<{ customer_id: string; d: string }>(
        `SELECT customer_id, CAST(_window_start AS VARCHAR) AS d FROM accounts ORDER BY customer_id LIMIT 1`,
      );
      try {
        await conn.run(`INSERT INTO accounts SELECT * FROM accounts WHERE customer_id = $1`, [row!.customer_id]);
        return row!;
      } catch (error) {
        expect(target.name).toBe('postgres');
        expect((error as Error).message).toMatch(/duplicate key/);
        return undefined;
      }
    });
    if (doubled) {
      const twice = await captureStdout(() => verifyCommand({ config: file, from: FROM, to: TO }));
      expect((twice.error as CommandError).exitCode).toBe(ExitCode.gaps);
      expect((twice.error as CommandError).message).toMatch(/^verify: accounts holds 1 key\(s\) in more than one row/);
      expect(twice.out).toMatch(/^accounts\s+1$/m);
      await backfillCommand({ config: file, from: doubled.d, to: doubled.d });
      expect((await captureStdout(() => verifyCommand({ config: file, from: FROM, to: TO }))).error).toBeUndefined();
    }
  });

  it('check reports the config, one source call and the warehouse; status shows watermarks, lag, runs, backfills and rejects', async () => {
    const { config } = await target.empty();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: ['accounts'],
      pageSize: 50,
    });
    emulator.stats.reset();
    // before the first load there is no warehouse, and check does not make one
    const early = await captureStdout(() => checkCommand({ config: file }));
    expect(early.error).toBeInstanceOf(WarehouseConfigError);
    expect(early.out).toMatch(
      /^config ok: .*job nightly \(accounts; 1-day windows from 2024-05-01\)\nsource ok: .* answered \(\d+ profiles\).*; requests paced at 1000 a second, 4 in flight\n$/,
    );
    expect(emulator.stats.requests()).toBe(1);

    await backfillCommand({ config: file, from: FROM, to: TO });
    const check = await captureStdout(() => checkCommand({ config: file }));
    expect(check.error).toBeUndefined();
    expect(check.out).toMatch(/^config ok: .*\nsource ok: .*\nwarehouse ok: (duckdb|postgres) /);
    const { out } = await captureStdout(() => statusCommand({ config: file, json: true }));
    const status = JSON.parse(out) as JobStatus;
    const accounts = status.streams[0]!;
    expect(accounts).toMatchObject({
      stream: 'accounts',
      completeThrough: TO,
      windowsDone: 12,
      windowsFailed: 0,
      windowsPending: 0,
    });
    expect(accounts.lagDays).toBe(Math.round((Date.parse(status.lastClosedDay) - Date.parse(TO)) / 86_400_000));
    expect(accounts.rejects).toBe([...emulator.truth.rejects('accounts', FROM, TO)].length);
    const perWindow = planWindows(FROM, TO, 1).map((w) => [...emulator.truth.accounts(w.start, w.end)].length);
    expect(accounts.rowsLoaded).toBe(perWindow.reduce((a, b) => a + b, 0));
    expect(status.runLock).toBeNull();
    expect(status.backfills).toMatchObject([
      { from: FROM, to: TO, status: 'done', windowsTotal: 12, windowsDone: 12, windowsFailed: 0, liveWorkers: 0 },
    ]);
    expect(status.runs).toHaveLength(1);
    expect(status.runs[0]).toMatchObject({
      status: 'succeeded',
      windows: 12,
      rowsRejected: accounts.rejects,
      command: `backfill --from ${FROM} --to ${TO}`,
    });
    expect(status.runs[0]!.durationSeconds).toBeGreaterThanOrEqual(0);
    const human = await captureStdout(() => statusCommand({ config: file }));
    expect(human.out).toMatch(/accounts\s+2024-05-12\s+\d+\s+12\s+0\s+0/);
    expect(human.out).toMatch(/run lock: free/);
    expect(human.out).toMatch(/backfills\n.*\n.*2024-05-01\.\.2024-05-12\s+accounts\s+done\s+12\/12/);
  });
});

describe('check fails with one clear line', () => {
  it('exits 2 on a bad config and 1 when the source does not answer', async () => {
    const bad = await runCli(['check', '--config', writeJobsFile('source:\n  base_url: nope\njobs: {}\n')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^loyalty-etl: .*source\.base_url/m);
    const file = emulatorJobs({ url: 'http://127.0.0.1:9', timezone: TZ, firstDay: FROM });
    const down = await runCli(['check', '--config', file]);
    expect(down.code).toBe(1);
    expect(down.stderr.split('\n').filter((l) => l.startsWith('loyalty-etl: '))).toHaveLength(1);
    expect(down.stdout).toMatch(/^config ok/);
  });
});
