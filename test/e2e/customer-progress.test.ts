import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Middleware } from '../../src/emulator/index.js';
import { emulatorJobs, runCliProcess } from '../helpers/cli.js';
import { duckdbTestDestination } from '../helpers/destinations.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-03-01';
const TO = '2024-03-20';
const POSTINGS = '/accounts/loyalty/postings';

// Each customer's postings answer after 250 ms and two are asked at once: the postings span takes several seconds,
// longer than the few seconds between two progress lines.
const slowPostings: Middleware = async (request, next) => {
  if (request.path === POSTINGS) await sleep(250);
  return next(request);
};

describe('the progress lines of a backfill and of a run on DuckDB', () => {
  const emulator = useEmulator({
    seed: 7,
    accounts: 60,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    port: 0,
    hooks: { middleware: [slowPostings] },
  });

  it('say how many of the postings span’s selected customers were asked while it runs, and drop it once it is done', async () => {
    const { config } = await duckdbTestDestination.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: ['accounts', 'loyalty_postings'],
      pageSize: 500,
      sourceKeys: { concurrency: 2 },
      // one span holds the whole range: its customers are every customer the backfill asks
      postings: '    postings:\n      customers: all\n      max_span_days: 31\n',
    });
    // a process of its own: the progress lines are timed against the emulator's slow answers, which would share the
    // command's one thread in this process
    const result = await runCliProcess(
      [
        '--log-format',
        'json',
        'backfill',
        '--config',
        file,
        '--from',
        FROM,
        '--to',
        TO,
        '--stream',
        'loyalty_postings',
      ],
      {
        LOYALTY_LOG_LEVEL: 'info',
      },
    );
    expect(result.code, result.stderr.slice(-800)).toBe(0);
    const progress = result.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map(
        (l) => JSON.parse(l) as { msg: string; customers?: Array<{ stream: string; asked: number; selected: number }> },
      )
      .filter((l) => l.msg === 'backfill progress');
    const asked = emulator.stats.requests(POSTINGS);
    expect(asked).toBeGreaterThan(0);
    const during = progress.filter((l) => l.customers !== undefined);
    expect(during.length, JSON.stringify(progress)).toBeGreaterThan(0);
    for (const line of during) {
      expect(line.customers).toHaveLength(1);
      const [postings] = line.customers!;
      expect(postings).toMatchObject({ stream: 'loyalty_postings', selected: asked });
      expect(postings!.asked).toBeGreaterThan(0);
      expect(postings!.asked).toBeLessThanOrEqual(asked);
    }
    // the last line, once the span is done, has no customers part
    expect(progress.at(-1)).not.toHaveProperty('customers');
  });

  it('are written by a run off a terminal too, ending with every window done', async () => {
    const { config } = await duckdbTestDestination.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: ['accounts', 'loyalty_postings'],
      pageSize: 500,
      sourceKeys: { concurrency: 2 },
      postings: '    postings:\n      customers: all\n      max_span_days: 31\n',
    });
    const result = await runCliProcess(['--log-format', 'json', 'run', '--config', file, '--until', TO], {
      LOYALTY_LOG_LEVEL: 'info',
    });
    expect(result.code, result.stderr.slice(-800)).toBe(0);
    const progress = result.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map(
        (l) =>
          JSON.parse(l) as {
            msg: string;
            windowsDone: number;
            windowsTotal: number;
            customers?: Array<{ stream: string }>;
          },
      )
      .filter((l) => l.msg === 'run progress');
    expect(
      progress.some((l) => l.customers?.[0]?.stream === 'loyalty_postings'),
      JSON.stringify(progress),
    ).toBe(true);
    const last = progress.at(-1)!;
    expect(last.windowsTotal).toBeGreaterThan(0);
    expect(last.windowsDone).toBe(last.windowsTotal);
  });
});
