import { DateTime } from 'luxon';
import { formatDay, parseDay } from './model/calendar.js';
import { ZoneClock } from './model/zone-clock.js';
import { type FaultOptions, type ResolvedFaults, resolveFaults } from './faults/fault-options.js';
import { type EmulatorReadings, type ResolvedReadings, resolveReadings } from './readings/readings.js';

/** What the emulated source holds and how it behaves. Every field has a default. */
export interface EmulatorOptions {
  /** Same seed, same options => byte-identical responses and ground truth. Default 1. */
  seed?: number;
  /** Number of customers. Default 300. */
  accounts?: number;
  /** First day with data, `YYYY-MM-DD` in `timezone`. Default: `endDate` minus 89 days. */
  startDate?: string;
  /** Last day with data (inclusive). Default: yesterday in `timezone` by the real clock. */
  endDate?: string;
  /** IANA zone of the business: day boundaries and zone-less timestamps. Default `Europe/Athens`. */
  timezone?: string;
  /** When set, any request without exactly this header value gets 401. */
  auth?: { header: string; value: string };
  /** Extra malformed records per valid record in the accounts and surveys exports (0..1). Default 0. */
  badRecordRate?: number;
  /**
   * Whether one field of the customers' profile is served with flags no client can read (`BAD_PROFILE_FIELD`):
   * reference data with one bad field among good ones. Default false.
   */
  badProfileField?: boolean;
  /**
   * Share of customers with neither phone nor e-mail (0..1), drawn per customer from the seed: the postings and
   * vouchers endpoints cannot be asked about them. Default 0.
   */
  contactlessRate?: number;
  /** Order of loyalty postings. Default `newest-first`. */
  postingsOrder?: 'newest-first' | 'oldest-first';
  /** Largest accepted page size; a larger one gets 400. Default 1000. */
  maxPageSize?: number;
  /** Average survey answer records per day. Default accounts / 20, at least 3. */
  surveysPerDay?: number;
  /**
   * Share of survey answer records served twice (0..1): an exact duplicate right after the record, in the same
   * `data[]` element, drawn per answer from the seed on a stream of its own (nothing else changes). Default 0.
   */
  surveyDuplicateRate?: number;
  /**
   * The first day (`YYYY-MM-DD`) of a season in which the business changes its setup every few days: a custom field
   * added, removed, renamed, and its values retyped; a survey question added, its answers retyped, another dropped
   * (`model/setup-season.ts`). Default: none, the setup never changes.
   */
  setupSeason?: string;
  /**
   * The integration's `created`, in the spec's month-name style (`Mon DD, YYYY H:MM:SS AM/PM`), as
   * `POST /accounts/integrations` serves it. Default `Mar 4, 2021 3:07:12 PM`.
   */
  integrationCreated?: string;
  /** Latency, errors, hangs, cut bodies and drift to inject (README "Faults"). Default: none. */
  faults?: FaultOptions;
  /**
   * How the emulator reads each convention the spec leaves open (README "Readings"); defaults are the
   * readings of "Choices where the spec is silent". The ground truth is the same whatever the readings.
   */
  readings?: EmulatorReadings;
}

/** {@link EmulatorOptions} with every default filled in. */
export interface ResolvedEmulatorOptions extends Required<
  Omit<EmulatorOptions, 'auth' | 'faults' | 'readings' | 'setupSeason'>
> {
  /** The first day of the season of setup changes, or null: none. */
  setupSeason: string | null;
  /** The required auth header, or null when the emulator accepts every caller. */
  auth: { header: string; value: string } | null;
  /** The faults injected from the start (none unless asked for). */
  faults: ResolvedFaults;
  /** Every reading, defaults filled in. */
  readings: ResolvedReadings;
}

/** The largest population the phone numbering can tell apart. */
export const MAX_ACCOUNTS = 100_000_000;

/**
 * Fills in defaults and checks every option, throwing a RangeError that names the bad one.
 *
 * @example resolveEmulatorOptions({ accounts: 1000, endDate: '2024-06-30' }).startDate // '2024-04-02'
 */
export function resolveEmulatorOptions(options: EmulatorOptions = {}, now: Date = new Date()): ResolvedEmulatorOptions {
  const timezone = options.timezone ?? 'Europe/Athens';
  new ZoneClock(timezone); // throws on an unknown zone
  const endDate = options.endDate ?? DateTime.fromJSDate(now).setZone(timezone).minus({ days: 1 }).toISODate()!;
  const end = parseDay(endDate);
  if (end === null) throw new RangeError(`endDate must be a date YYYY-MM-DD, got "${endDate}"`);
  const startDate = options.startDate ?? formatDay(end - 89);
  const start = parseDay(startDate);
  if (start === null) throw new RangeError(`startDate must be a date YYYY-MM-DD, got "${startDate}"`);
  if (start > end) throw new RangeError(`startDate ${startDate} is after endDate ${endDate}`);
  const accounts = options.accounts ?? 300;
  const seed = options.seed ?? 1;
  const badRecordRate = options.badRecordRate ?? 0;
  const badProfileField = options.badProfileField ?? false;
  const contactlessRate = options.contactlessRate ?? 0;
  const maxPageSize = options.maxPageSize ?? 1000;
  const surveysPerDay = options.surveysPerDay ?? Math.max(3, Math.round(accounts / 20));
  const surveyDuplicateRate = options.surveyDuplicateRate ?? 0;
  const postingsOrder = options.postingsOrder ?? 'newest-first';
  const integrationCreated = options.integrationCreated ?? 'Mar 4, 2021 3:07:12 PM';
  check(Number.isSafeInteger(seed) && seed >= 0, 'seed must be a non-negative integer');
  check(
    Number.isInteger(accounts) && accounts >= 1 && accounts <= MAX_ACCOUNTS,
    `accounts must be an integer in 1..${MAX_ACCOUNTS}`,
  );
  check(badRecordRate >= 0 && badRecordRate <= 1, 'badRecordRate must be within 0..1');
  check(contactlessRate >= 0 && contactlessRate <= 1, 'contactlessRate must be within 0..1');
  check(Number.isInteger(maxPageSize) && maxPageSize >= 1, 'maxPageSize must be a positive integer');
  check(surveysPerDay >= 0 && Number.isFinite(surveysPerDay), 'surveysPerDay must be a non-negative number');
  check(surveyDuplicateRate >= 0 && surveyDuplicateRate <= 1, 'surveyDuplicateRate must be within 0..1');
  check(
    postingsOrder === 'newest-first' || postingsOrder === 'oldest-first',
    'postingsOrder must be newest-first or oldest-first',
  );
  if (options.auth) check(options.auth.header.length > 0, 'auth.header must not be empty');
  const setupSeason = options.setupSeason ?? null;
  if (setupSeason !== null)
    check(parseDay(setupSeason) !== null, `setupSeason must be a date YYYY-MM-DD, got "${setupSeason}"`);
  return {
    seed,
    accounts,
    startDate,
    endDate,
    timezone,
    auth: options.auth ? { header: options.auth.header, value: options.auth.value } : null,
    badRecordRate,
    badProfileField,
    contactlessRate,
    postingsOrder,
    maxPageSize,
    surveysPerDay,
    surveyDuplicateRate,
    setupSeason,
    integrationCreated,
    faults: resolveFaults(options.faults, seed),
    readings: resolveReadings(options.readings),
  };
}

function check(condition: boolean, message: string): void {
  if (!condition) throw new RangeError(message);
}
