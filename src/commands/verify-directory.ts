import type { JobSettings } from '../plan/job-plan.js';
import { readAllPages } from '../extract/paged-listing.js';
import type { Destination } from '../load/destination.js';
import { addDays, type Day } from '../plan/days.js';
import { planRange, windowStartOf } from '../plan/plan-windows.js';
import type { Window } from '../plan/windows.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import {
  customersMissingFromAccounts,
  customersOfWindow,
  directoryCompleteThrough,
  directoryHeld,
} from '../state/directory.js';
import { accountsStream } from '../streams/accounts.js';

/** Customers named in the report at most; the total is always given. */
const NAMED = 50;
/** Windows read whole to name the customers the warehouse never saw, at most. */
const WINDOWS_READ = 20;

/** A customer the source has and `accounts` does not. */
export interface MissingCustomer {
  customerId: string;
  /** The accounts window to re-load (`backfill --from D --to D`) to bring the customer back. */
  window: Day;
  why: 'deleted from accounts' | 'never loaded';
}

/** What `verify` finds of the customer directory: every customer the source lists, since the program's start. */
export interface DirectoryCheck {
  /** First day of the directory's windows (the window holding `source.history_start`). */
  from: Day;
  /** The day through which every accounts window is done: the check covers `[from, through]`. */
  through: Day;
  /** The first accounts window not done, when the directory stops before the verified range's end. */
  notLoaded: Window | null;
  /** Customers the source lists over `[from, through]` (its export's `totalCount`). */
  source: number | null;
  /** Customers the warehouse saw over the same days, and rejected records of customers it never saw. */
  seen: number;
  rejected: number;
  /** Customers missing from `accounts`: all of them counted, the first ones named. */
  missingTotal: number;
  missing: MissingCustomer[];
  /** Null when complete; otherwise what is wrong, in one line. */
  gap: string | null;
  /** What the counts could not settle, as `cannot prove …, because …`; null when they did. */
  cannotProve: string | null;
}

/**
 * Proves the customer directory: every accounts window from the program's start is done, and the customers the
 * source lists over those days (one request) are the customers the warehouse holds, rejected records counted. A
 * customer listed by a loaded window but gone from `accounts` is named from the warehouse alone; a shortfall
 * beyond those is narrowed down by halving the range (two requests a step) to the windows holding it, which are
 * read whole to name the customers.
 */
export async function checkDirectory(options: {
  api: LoyaltyApi;
  destination: Destination;
  job: string;
  jobConfig: JobSettings;
  historyStart: Day;
  to: Day;
  pageSize: number;
}): Promise<DirectoryCheck> {
  const { api, destination, job, jobConfig } = options;
  const from = windowStartOf(jobConfig, options.historyStart);
  const through = await destination.withConnection((conn) => directoryCompleteThrough(conn, job, from));
  const notLoaded = through < options.to ? planRange(jobConfig, addDays(through, 1), addDays(through, 1))[0]! : null;
  const check: DirectoryCheck = {
    from,
    through,
    notLoaded,
    source: null,
    seen: 0,
    rejected: 0,
    missingTotal: 0,
    missing: [],
    gap: null,
    cannotProve: null,
  };
  if (through >= from) {
    const count = (range: Window) => accountsStream.countRange!(api, range);
    const held = (range: Window) =>
      destination.withConnection((conn) => directoryHeld(conn, job, range.start, range.end));
    check.source = await count({ start: from, end: through });
    const all = await held({ start: from, end: through });
    check.seen = all.seen;
    check.rejected = all.rejected;
    const lost = await destination.withConnection((conn) => customersMissingFromAccounts(conn, from, through, NAMED));
    check.missingTotal = lost.total;
    check.missing = lost.first.map((c) => ({
      customerId: c.customerId,
      window: c.lastSeen,
      why: 'deleted from accounts' as const,
    }));
    const shortfall = check.source - all.seen - all.rejected;
    if (shortfall > 0) {
      // The count says records, not customers: an export that lists a customer once per change counts more records
      // than customers. Only the windows' own listings, read whole, say which customers are missing.
      const lastListed = new Map<string, Day>();
      const short = await windowsShort(planRange(jobConfig, from, through), count, held);
      for (const window of short.windows) {
        const known = await destination.withConnection((conn) => customersOfWindow(conn, job, window.start));
        for (const id of await listedCustomers(api, window, options.pageSize))
          if (!known.has(id)) lastListed.set(id, window.start);
      }
      check.missingTotal += lastListed.size;
      for (const [customerId, window] of [...lastListed].slice(0, NAMED - check.missing.length))
        check.missing.push({ customerId, window, why: 'never loaded' });
      if (short.more && lastListed.size === 0)
        check.cannotProve =
          `cannot prove the customer directory ${from}..${through} complete, because the export counts ${shortfall} more records than the ` +
          `warehouse saw customers, in more than ${WINDOWS_READ} windows, and the ${WINDOWS_READ} read whole lack no customer ` +
          '(an export that lists a customer once per change counts changes, not customers)';
    }
  }
  check.gap = directoryGap(check);
  return check;
}

function directoryGap(check: DirectoryCheck): string | null {
  const problems: string[] = [];
  if (check.notLoaded)
    problems.push(
      `accounts windows from ${check.notLoaded.start} on are not loaded, so customers created since are not known`,
    );
  if (check.missingTotal > 0) {
    const first = check.missing[0];
    problems.push(
      `${check.missingTotal} customer(s) missing from accounts${first ? `; first: ${first.customerId} (re-load it with: backfill --from ${first.window} --to ${first.window})` : ''}`,
    );
  }
  return problems.length === 0 ? null : problems.join('; ');
}

/**
 * The windows of `windows` where the source lists more records than the warehouse holds customers, found by halving:
 * a half that adds up is left alone. At most {@link WINDOWS_READ} are returned; `more` says whether others were left.
 */
async function windowsShort(
  windows: Window[],
  count: (range: Window) => Promise<number>,
  held: (range: Window) => Promise<{ seen: number; rejected: number }>,
): Promise<{ windows: Window[]; more: boolean }> {
  const found: Window[] = [];
  let more = false;
  const visit = async (part: Window[]): Promise<void> => {
    if (part.length === 0) return;
    if (found.length >= WINDOWS_READ) return void (more = true);
    const range = { start: part[0]!.start, end: part.at(-1)!.end };
    const [listed, h] = [await count(range), await held({ start: range.start, end: part.at(-1)!.start })];
    if (listed <= h.seen + h.rejected) return;
    if (part.length === 1) return void found.push(part[0]!);
    const half = Math.ceil(part.length / 2);
    await visit(part.slice(0, half));
    await visit(part.slice(half));
  };
  await visit(windows);
  return { windows: found, more };
}

/** A record's customer id, by either name the service may give it. */
function customerIdOf(record: unknown): string | undefined {
  const named = record as { customerId?: unknown; accountId?: unknown } | null;
  const id = named?.customerId ?? named?.accountId;
  return typeof id === 'string' ? id : undefined;
}

/** Every customer id one accounts window of the source lists (a record without one by its whole JSON). */
export async function listedCustomers(api: LoyaltyApi, window: Window, pageSize: number): Promise<Set<string>> {
  const ids = new Set<string>();
  const listing = {
    label: `accounts ${window.start}..${window.end}`,
    pageSize,
    fetchPage: (n: number) => api.accountsPage(window, n, pageSize),
    keyOf: customerIdOf,
  };
  for await (const page of readAllPages(listing)) {
    if (page.restart) ids.clear();
    for (const record of page.records) ids.add(customerIdOf(record)?.trim() ?? JSON.stringify(record));
  }
  return ids;
}
