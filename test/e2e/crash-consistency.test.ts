import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { truthContents, warehouseContents } from '../helpers/ground-truth.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';
const START = '2024-05-01';
const END = '2024-05-06';
const TRIALS = Number(process.env.CRASH_TRIALS ?? 20);

/** A small deterministic generator, so a failing trial can be replayed from its seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(testDestinations)('crash consistency on $name', (target) => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 31, accounts: 40, startDate: START, endDate: END, timezone: TZ, badRecordRate: 0.03, port: 0 });
  });
  afterAll(async () => emulator.close());

  it(`SIGKILL at ${TRIALS} random instants of a multi-window backfill, then a re-run: ground truth every time`, async () => {
    const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
    const random = mulberry32(seed);
    const truth = truthContents(emulator, START, END);
    const outcomes: string[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: START,
        destination: config,
        streams: ['accounts', 'surveys', 'loyalty_postings'],
        pageSize: 10,
        postings: '    postings:\n      customers: all\n      max_span_days: 3\n',
      });
      const args = ['backfill', '--config', file, '--from', START, '--to', END, '--concurrency', '3'];
      // kill after a random number of committed windows, plus a random delay: inside staging, a commit or between
      const afterWindows = Math.floor(random() * 16);
      const delayMs = Math.floor(random() * 40);
      const victim = startCli(args);
      const killed = await new Promise<boolean>((resolve) => {
        const timer = setInterval(() => {
          if ((victim.output().match(/"window loaded"/g) ?? []).length >= afterWindows) {
            clearInterval(timer);
            setTimeout(() => resolve(victim.child.kill('SIGKILL')), delayMs);
          }
        }, 2);
        void victim.done.then(() => {
          clearInterval(timer);
          resolve(false);
        });
      });
      const first = await victim.done;
      outcomes.push(first.signal === 'SIGKILL' ? `killed after ${afterWindows}+${delayMs}ms` : 'finished');
      expect(killed || first.code === 0, first.stderr.slice(-400)).toBe(true);
      // no window is half there: every window marked done has its rows, none is marked without them
      await withWarehouse(config, async (conn) => {
        const [orphans] = await conn.all<{ n: string | number }>(
          `SELECT COUNT(*) AS n FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM _etl_windows w WHERE w.stream = 'accounts' AND w.status = 'done' AND w.window_start = a._window_start)`,
        );
        expect(Number(orphans!.n), `trial ${trial} (seed ${seed})`).toBe(0);
      });
      const again = await runCli(args);
      expect(again.code, `trial ${trial} (seed ${seed}): ${again.stderr.slice(-400)}`).toBe(0);
      const loaded = await warehouseContents(config);
      expect(loaded.accounts, `trial ${trial} (seed ${seed})`).toEqual(truth.accounts);
      expect(loaded.surveys, `trial ${trial} (seed ${seed})`).toEqual(truth.surveys);
      expect(loaded.postings, `trial ${trial} (seed ${seed})`).toEqual(truth.postings);
    }
    expect(outcomes.filter((o) => o.startsWith('killed')).length, outcomes.join(', ')).toBeGreaterThanOrEqual(Math.ceil(TRIALS * 0.75));
  }, 600_000);
});
