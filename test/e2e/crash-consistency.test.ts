import { chmodSync, copyFileSync, existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { publishPathOf } from '../../src/config/duckdb-files.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli, startCli, type CliResult } from '../helpers/cli.js';
import {
  heldInCommitOnPostgres,
  mulberry32,
  sizeOf,
  untilSeen,
  windowsLoaded,
  type Victim,
} from '../helpers/crash-aims.js';
import { testDestinations } from '../helpers/destinations.js';
import { truthContents, warehouseContents } from '../helpers/ground-truth.js';
import { RequestTripwire } from '../helpers/request-tripwire.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-05-01';
const END = '2024-05-06';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'];
const ACCOUNTS = '/business-data/accounts';
const POSTINGS = '/accounts/loyalty/postings';
/** Kills at random instants on top of the aimed ones: a net for a phase nobody thought of (`CRASH_TRIALS` asks for more). */
const RANDOM_TRIALS = Number(process.env.CRASH_TRIALS ?? 2);
/** A trial runs the CLI twice, on a machine that may be busy. */
const SLOW = 120_000;

/** Reads the copy published for readers: it is read-only, so through a writable copy of it. */
async function publishedContents(config: DestinationSettings) {
  const copy = join(testTempDir('published-'), 'warehouse.duckdb');
  copyFileSync(publishPathOf(config)!, copy);
  chmodSync(copy, 0o644);
  return warehouseContents({ type: 'duckdb', path: copy, schema: 'main' });
}

describe.each(testDestinations)('crash consistency on $name', (target) => {
  const tripwire = new RequestTripwire();
  let truth: ReturnType<typeof truthContents>;
  /** A backfill nobody interrupts, and its requests per path. */
  let reference: { config: DestinationSettings; result: CliResult };
  const requests = new Map<string, number>();
  const emulator = useEmulator({
    seed: 31,
    accounts: 40,
    startDate: START,
    endDate: END,
    timezone: TZ,
    badRecordRate: 0.03,
    port: 0,
    hooks: { middleware: [tripwire.middleware] },
  });
  beforeAll(async () => {
    truth = truthContents(emulator, START, END);
    // the bearings of the aimed kills: how many requests of each path a whole backfill makes
    const { config, args } = await backfillJob();
    emulator.stats.reset();
    reference = { config, result: await runCli(args) };
    for (const path of [ACCOUNTS, POSTINGS]) requests.set(path, emulator.stats.requests(path));
  });

  async function backfillJob() {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      // the readers' copy is compared with the ground truth: personal data as loaded
      destination: { ...config, analysts: { personal_data: 'keep' } },
      streams: STREAMS,
      pageSize: 10,
      postings: '    postings:\n      customers: all\n      max_span_days: 3\n',
    });
    return { config, args: ['backfill', '--config', file, '--from', START, '--to', END, '--concurrency', '3'] };
  }

  /** What the warehouse must hold, and the readers' copy of a DuckDB warehouse with it. */
  async function expectGroundTruth(config: DestinationSettings, label: string) {
    const loaded = await warehouseContents(config);
    expect(loaded.accounts, label).toEqual(truth.accounts);
    expect(loaded.surveys, label).toEqual(truth.surveys);
    expect(loaded.postings, label).toEqual(truth.postings);
    if (target.name !== 'duckdb') return;
    const published = publishPathOf(config)!;
    expect(await publishedContents(config), `${label}: the readers' copy`).toEqual(loaded);
    // a copy a killed publish left half-written is deleted by the next one
    expect(
      readdirSync(dirname(published)).filter(
        (name) => name.startsWith(`.${basename(published)}.tmp-`) || name.startsWith(`${basename(published)}.tmp-`),
      ),
      label,
    ).toEqual([]);
  }

  /**
   * Starts the backfill, SIGKILLs it once `aim` resolves, and checks the warehouse: no window half there after the
   * kill, and the ground truth after the same command again. `aim` gets the process and the warehouse; a backfill
   * that ends before the aimed instant fails the trial (when `mustKill`).
   */
  async function crashTrial(
    label: string,
    aim: (victim: Victim, config: DestinationSettings) => Promise<unknown>,
    mustKill = true,
  ): Promise<boolean> {
    const { config, args } = await backfillJob();
    // each window's `window loaded` line (at debug) is what the aims count
    const victim = startCli(args, { LOYALTY_LOG_LEVEL: 'debug' });
    const killed = await Promise.race([
      aim(victim, config).then(() => victim.child.kill('SIGKILL')),
      victim.done.then(() => false),
    ]);
    const first = await victim.done;
    tripwire.disarm();
    if (mustKill)
      expect(first.signal, `${label}: the backfill ended before it could be killed: ${first.stderr.slice(-400)}`).toBe(
        'SIGKILL',
      );
    else expect(killed || first.code === 0, `${label}: ${first.stderr.slice(-400)}`).toBe(true);
    // no window is half there: a window's rows and its record in the ledger commit together, so no row is without it
    await withWarehouse(config, async (conn) => {
      for (const [stream, table] of [
        ['accounts', 'accounts'],
        ['surveys', 'survey_responses'],
        ['loyalty_postings', 'loyalty_postings'],
      ] as const) {
        const [orphans] = await conn.all<{ n: string | number }>(
          `SELECT COUNT(*) AS n FROM ${table} t WHERE NOT EXISTS (SELECT 1 FROM _etl_windows w WHERE w.stream = '${stream}' AND w.status = 'done' AND w.window_start = t._window_start)`,
        );
        expect(Number(orphans!.n), `${label}: ${table}`).toBe(0);
      }
    });
    const again = await runCli(args);
    expect(again.code, `${label}: ${again.stderr.slice(-400)}`).toBe(0);
    await expectGroundTruth(config, label);
    return first.signal === 'SIGKILL';
  }

  it(
    'a backfill nobody kills loads the ground truth, reading several pages of a multi-window span of accounts and two spans of postings',
    async () => {
      expect(reference.result.code, reference.result.stderr.slice(-400)).toBe(0);
      expect(reference.result.stdout).toMatch(/^accounts: 6 windows read/m);
      expect(requests.get(ACCOUNTS)).toBeGreaterThan(6);
      expect(requests.get(POSTINGS)).toBeGreaterThan(20);
      await expectGroundTruth(reference.config, 'uninterrupted');
    },
    SLOW,
  );

  it(
    'SIGKILL while a page of accounts is being read, then a re-run: ground truth',
    async () => {
      await crashTrial('extracting', () => tripwire.arm({ path: ACCOUNTS, nth: 2, when: 'held' }));
    },
    SLOW,
  );

  it(
    'SIGKILL while the page just read is being staged, more pages of the span to come: ground truth',
    async () => {
      await crashTrial('staging', () => tripwire.arm({ path: ACCOUNTS, nth: 3, when: 'served' }));
    },
    SLOW,
  );

  it(
    'SIGKILL inside the commit of a span, then a re-run: ground truth',
    async () => {
      await crashTrial('committing', async (victim, config) => {
        if (config.type === 'postgres') return heldInCommitOnPostgres(victim, config);
        // DuckDB writes a commit into its write-ahead log: the first write after the span's last page is its commit
        await tripwire.arm({ path: ACCOUNTS, nth: requests.get(ACCOUNTS)!, when: 'served' });
        const wal = `${config.path}.wal`;
        const before = sizeOf(wal);
        await untilSeen(victim, () => sizeOf(wal) !== before, 1);
      });
    },
    SLOW,
  );

  it(
    'SIGKILL the instant a span is committed, the next ones under way: ground truth',
    async () => {
      await crashTrial('between commits', (victim) => untilSeen(victim, () => windowsLoaded(victim) > 0));
    },
    SLOW,
  );

  it(
    "SIGKILL while a customer's postings are being read, the accounts and surveys in: ground truth",
    async () => {
      await crashTrial('extracting postings', () =>
        tripwire.arm({ path: POSTINGS, nth: Math.ceil(requests.get(POSTINGS)! * 0.7), when: 'held' }),
      );
    },
    SLOW,
  );

  it(
    'SIGKILL after the last window, while the backfill is wound up (DuckDB: while the copy for readers is written): ground truth',
    async () => {
      await crashTrial('winding up', async (victim, config) => {
        if (config.type === 'postgres') return untilSeen(victim, () => victim.output().includes('"run finished"'));
        // the copy is written in a folder of its own beside the published path, then renamed over it
        const published = publishPathOf(config)!;
        const workDir = `.${basename(published)}.tmp-${victim.child.pid}-`;
        const writing = () =>
          readdirSync(dirname(published)).some(
            (name) => name.startsWith(workDir) && existsSync(join(dirname(published), name, basename(published))),
          );
        return untilSeen(victim, writing, 1);
      });
    },
    SLOW,
  );

  it(
    `SIGKILL at ${RANDOM_TRIALS} random instants, then a re-run: ground truth every time`,
    async () => {
      const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
      const random = mulberry32(seed);
      const outcomes: boolean[] = [];
      for (let trial = 0; trial < RANDOM_TRIALS; trial++) {
        // after a random number of committed windows, plus a random delay: inside staging, a commit or between. Of
        // the 18 windows, the postings' are logged three at a time as their spans commit: past 12 the run may be
        // over before the kill
        const afterWindows = Math.floor(random() * 12);
        const delayMs = Math.floor(random() * 40);
        const label = `random trial ${trial} (CRASH_SEED=${seed}): after ${afterWindows} windows + ${delayMs} ms`;
        const aim = (victim: Victim) =>
          untilSeen(victim, () => windowsLoaded(victim) >= afterWindows).then(
            () => new Promise((r) => setTimeout(r, delayMs)),
          );
        outcomes.push(await crashTrial(label, aim, false));
      }
      // most trials must kill, or the net catches nothing; a kill can still come after a run's end (in its publish)
      expect(outcomes.filter(Boolean).length, `CRASH_SEED=${seed}`).toBeGreaterThanOrEqual(
        Math.floor(RANDOM_TRIALS * 0.75),
      );
    },
    RANDOM_TRIALS * SLOW,
  );
});
