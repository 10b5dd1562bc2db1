import type { Emulator, StartEmulatorOptions } from '../../src/emulator/index.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs } from './cli.js';

/**
 * The loyalty program the suites of the customer state (`loyalty_status`, `vouchers` and their histories) load:
 * two and a half months of activity in Athens, ending in the middle of November, so that the month end that
 * follows expires points and the weeks after it redeem, expire and drop vouchers.
 */
export const LOYALTY_PROGRAM = { timezone: 'Europe/Athens', start: '2024-09-01', end: '2024-11-15' } as const;

/** The morning after the program's last day: when its first night asks the service. */
export const MORNING_AFTER = Date.parse('2024-11-16T08:00:00Z');

/** Past the end of November (points expire at month ends) and of vouchers' validity and listing. */
export const WEEKS_LATER = Date.parse('2024-12-20T08:00:00Z');

/** The streams of a job that holds the customer state: the directory and postings it needs, and the state. */
export const STATE_STREAMS = ['accounts', 'loyalty_postings', 'loyalty_status', 'vouchers'];

/** Each test of these suites runs the CLI several times. */
export const STATE_TEST_TIMEOUT = 180_000;

/** The emulator's options serving the program with `customers` customers, its clock read from `clock` (the tests move it). */
export function loyaltyProgram(seed: number, customers: number, clock: () => number): StartEmulatorOptions {
  return {
    seed,
    accounts: customers,
    startDate: LOYALTY_PROGRAM.start,
    endDate: LOYALTY_PROGRAM.end,
    timezone: LOYALTY_PROGRAM.timezone,
    port: 0,
    clock,
  };
}

/** A jobs file over the program from its first day, holding the state, each customer asked within `sweepDays` nights. */
export function stateJobs(emulator: Emulator, destination: DestinationSettings, sweepDays: number): string {
  return emulatorJobs({
    url: emulator.url,
    timezone: LOYALTY_PROGRAM.timezone,
    firstDay: LOYALTY_PROGRAM.start,
    destination,
    streams: STATE_STREAMS,
    pageSize: 50,
    postings: `    sweep_days: ${sweepDays}\n`,
  });
}
