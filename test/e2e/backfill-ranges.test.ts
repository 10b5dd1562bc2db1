import { describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import { emulatorJobs } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { truthContents, warehouseContents } from '../helpers/ground-truth.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
/** Inside the window 2024-03-19..21 of the 3-day grid: the first backfill reads that window only through the 20th. */
const INSIDE = '2024-03-20';
const END = '2024-04-09';

describe.each(testDestinations)('backfills of ranges that end inside a window, on $name', (target) => {
  const emulator = useEmulator({ seed: 5, accounts: 120, startDate: START, endDate: END, timezone: TZ, port: 0 });

  it('a later backfill over the whole window loads the days the first one left out', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: ['accounts', 'surveys'],
      windowDays: 3,
    });
    await backfillCommand({ config: file, from: START, to: INSIDE, concurrency: '2' });
    await backfillCommand({ config: file, from: START, to: END, concurrency: '2' });
    const truth = truthContents(emulator, START, END);
    const held = await warehouseContents(config);
    expect(held.surveys).toEqual(truth.surveys);
    expect(held.accounts).toEqual(truth.accounts);
  }, 180_000);
});
