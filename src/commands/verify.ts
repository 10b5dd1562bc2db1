import pLimit from 'p-limit';
import type { StreamName } from '../plan/job-plan.js';
import type { ResolvedConfig } from '../config/load-config.js';
import { CommandError, ExitCode } from './exit-codes.js';
import { readAllPages } from '../extract/paged-listing.js';
import { planRange } from '../plan/plan-windows.js';
import type { Window } from '../plan/windows.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import {
  checkWindow,
  duplicateKeys,
  warehouseWindowsOf,
  type DuplicateKeys,
  type WarehouseWindow,
  type WindowCheck,
} from '../state/window-reconciliation.js';
import { streamDefinition } from '../streams/registry.js';
import { splitSurveyElement } from '../streams/surveys.js';
import { commandLogger, createApi, resolveJob, usingDestination, type CommonOptions } from './job-session.js';
import { table } from './table.js';
import { checkDirectory, listedCustomers, type DirectoryCheck } from './verify-directory.js';
import { checkPostingsSelection, postingsCheckLines, type PostingsCheck } from './verify-postings.js';
import { checkStateStream, STATE_STREAMS, stateCheckLines, type StateCheck } from './verify-state.js';
import type { Command } from 'commander';
import { withJobFlags, withRangeFlags, parseRange, type RangeOptions } from './shared-flags.js';

export interface VerifyOptions extends CommonOptions, RangeOptions {
  json?: boolean;
}

/**
 * What the source says a window holds, at the level the warehouse counts it: accounts — the customers the export
 * lists: its `totalCount` where that is what the warehouse holds (one cheap call), else the distinct customers of
 * its pages (an export may list a customer once per change); surveys — the answer records of every element of
 * the listing (`totalCount` counts elements of 1–4 answers, so the pages are read and their answers counted).
 * Postings have no per-window count in the source: null.
 */
async function sourceCount(
  api: LoyaltyApi,
  stream: StreamName,
  window: Window,
  pageSize: number,
  held: WarehouseWindow | undefined,
): Promise<number | null> {
  if (stream === 'accounts') {
    const total = (await api.accountsPage(window, 1, 1)).totalCount;
    // one request when it adds up; otherwise the export may count changes rather than customers (once per change): its customers are counted
    if (held !== undefined && total === held.held + held.rejected) return total;
    return (await listedCustomers(api, window, pageSize)).size;
  }
  if (stream === 'surveys') {
    let answers = 0;
    const listing = {
      label: `surveys ${window.start}..${window.end}`,
      pageSize,
      fetchPage: (n: number) => api.surveysPage(window, n, pageSize),
    };
    for await (const page of readAllPages(listing)) {
      if (page.restart) answers = 0;
      answers += page.records.flatMap(splitSurveyElement).length;
    }
    return answers;
  }
  return null;
}

/**
 * `loyalty-etl verify --from D --to D`: per window and stream, what the source holds against what the warehouse
 * holds (rejects included), and, with accounts, the whole customer directory since `source.history_start`;
 * prints the gaps and exits 4 when there is any. Re-run a window with a gap with `backfill --from D --to D`.
 */
export async function verifyCommand(options: VerifyOptions): Promise<void> {
  const { config, job, jobConfig } = resolveJob(options);
  const { streams } = parseRange(options, jobConfig);
  const windows = planRange(jobConfig, options.from, options.to);
  const api = createApi(config, commandLogger());
  // a damaged block anywhere fails here, before any count is trusted (exit 10)
  await usingDestination(config, (destination) => destination.readWhole(), { create: false });
  // the warehouse is opened for its reads only, not while the source is asked: a run waiting for the file waits less
  const { checks, duplicates } = await checkWindows(config, api, job, streams, windows);
  const directory = streams.includes('accounts')
    ? await usingDestination(
        config,
        (destination) =>
          checkDirectory({
            api,
            destination,
            job,
            jobConfig,
            historyStart: config.source.history_start,
            to: options.to,
            pageSize: config.source.page_size,
          }),
        { create: false },
      )
    : undefined;
  const state: StateCheck[] = [];
  for (const stream of streams.filter((s) => STATE_STREAMS.includes(s)))
    state.push(
      await usingDestination(
        config,
        (destination) =>
          checkStateStream(destination, stream, jobConfig.sweep_days, new Date(), jobConfig.first_night === 'sweep'),
        { create: false },
      ),
    );
  const postings = streams.includes('loyalty_postings')
    ? await usingDestination(config, (destination) => checkPostingsSelection(destination, jobConfig, new Date()), {
        create: false,
      })
    : undefined;
  const report: VerifyReport = {
    checks,
    gaps: checks.filter((c) => c.gap !== null),
    duplicates,
    directory,
    state,
    postings,
  };
  const { gaps } = report;
  if (options.json) {
    const json = {
      job,
      from: options.from,
      to: options.to,
      streams,
      windowsChecked: report.checks.length,
      gaps,
      directory,
      customerState: state,
      postings,
      duplicateKeys: duplicates,
    };
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  } else
    process.stdout.write(
      `${reportLines(report, { job, from: options.from, to: options.to, windows: windows.length, streams }).join('\n')}\n`,
    );
  if (duplicates.length > 0) {
    const d = duplicates[0]!;
    const more = duplicates.length > 1 ? ` (and ${duplicates.length - 1} more table(s))` : '';
    throw new CommandError(
      `verify: ${d.table} holds ${d.keys} key(s) in more than one row${more}; re-load the windows of those rows with backfill --from D --to D`,
      ExitCode.gaps,
    );
  }
  const problems: string[] = [];
  if (gaps.length > 0) {
    const first = gaps[0]!;
    problems.push(
      `${gaps.length} window(s) with gaps; first: ${first.stream} ${first.window}: ${first.gap} (re-run it with: backfill --from ${first.window} --to ${first.window})`,
    );
  }
  if (directory?.gap) problems.push(`customer directory: ${directory.gap}`);
  for (const c of state) if (c.gap) problems.push(`${c.coverage.stream}: ${c.gap}`);
  if (postings?.gap) problems.push(`loyalty_postings: ${postings.gap}`);
  if (problems.length > 0) throw new CommandError(`verify: ${problems.join('; ')}`, ExitCode.gaps);
  if (directory?.cannotProve) throw new CommandError(`verify: ${directory.cannotProve}`, ExitCode.cannotProve);
}

/** What `verify` found. */
interface VerifyReport {
  checks: WindowCheck[];
  gaps: WindowCheck[];
  duplicates: DuplicateKeys[];
  directory: DirectoryCheck | undefined;
  /** The state streams' coverage of the customer directory. */
  state: StateCheck[];
  /** The postings selection: its bound, and its sweep's coverage. */
  postings: PostingsCheck | undefined;
}

/**
 * Every window of every stream: the warehouse's side read first (one connection, one query at a time), then the
 * source's counts, `source.concurrency` requests at a time; and, where the warehouse leaves keys to the merge,
 * keys held by more than one row.
 */
async function checkWindows(
  config: ResolvedConfig,
  api: LoyaltyApi,
  job: string,
  streams: StreamName[],
  windows: Window[],
): Promise<{ checks: WindowCheck[]; duplicates: DuplicateKeys[] }> {
  if (windows.length === 0) return { checks: [], duplicates: [] };
  const { held, duplicates } = await usingDestination(
    config,
    (destination) =>
      destination.withConnection(async (conn) => ({
        // keys the database does not enforce are the merge's to keep: checked here
        duplicates: destination.capabilities.declaredKeys
          ? []
          : await duplicateKeys(
              conn,
              streams.flatMap((s) => streamDefinition(s).tables),
            ),
        held: await warehouseWindowsOf(conn, job, streams, windows[0]!.start, windows.at(-1)!.start),
      })),
    { create: false },
  );
  const limit = pLimit(config.source.concurrency);
  const checks: WindowCheck[] = [];
  for (const stream of streams) {
    const counts = await Promise.all(
      windows.map((w) =>
        limit(() => sourceCount(api, stream, w, config.source.page_size, held.get(stream)!.get(w.start))),
      ),
    );
    for (const [i, w] of windows.entries())
      checks.push(checkWindow(stream, w.start, held.get(stream)!.get(w.start), counts[i]!));
  }
  return { checks, duplicates };
}

/** The human form of the report: the gaps, the keys held twice, the directory, and one line that sums it up. */
function reportLines(
  report: VerifyReport,
  scope: { job: string; from: string; to: string; windows: number; streams: StreamName[] },
): string[] {
  const { gaps, duplicates, directory, state, postings } = report;
  const out: string[] = [];
  if (gaps.length > 0) {
    const rows = gaps.map((g) => [
      g.stream,
      g.window,
      g.expected ?? '-',
      g.basis === 'source' ? 'source' : 'last load',
      g.held,
      g.rejected,
      g.gap!,
    ]);
    out.push(table(['stream', 'window', 'expected', 'from', 'warehouse', 'of which rejected', 'gap'], rows), '');
  }
  if (duplicates.length > 0)
    out.push(
      table(
        ['table', 'keys held by more than one row'],
        duplicates.map((d) => [d.table, d.keys]),
      ),
      '',
    );
  if (directory) out.push(...directoryLines(directory), '');
  for (const c of state) out.push(...stateCheckLines(c), '');
  if (postings) out.push(...postingsCheckLines(postings), '');
  const streams = `${scope.streams.length} stream(s) (${scope.streams.join(', ')})`;
  out.push(
    `verified ${scope.windows} window(s) × ${streams} of job ${scope.job}, ${scope.from}..${scope.to}: ${gaps.length === 0 ? 'no gaps' : `${gaps.length} with gaps`}`,
  );
  if (scope.streams.includes('loyalty_postings'))
    out.push("loyalty_postings: the source has no per-window count; compared with what each window's load recorded");
  return out;
}

function directoryLines(d: DirectoryCheck): string[] {
  const lines: string[] = [];
  if (d.missing.length > 0)
    lines.push(
      table(
        ['missing customer', 'window', 'why'],
        d.missing.map((m) => [m.customerId, m.window, m.why]),
      ),
      '',
    );
  if (d.source === null) lines.push(`customer directory: no accounts window since ${d.from} is loaded`);
  else {
    const held = `${d.seen} in the warehouse${d.rejected ? ` and ${d.rejected} rejected` : ''}`;
    const extra =
      d.seen + d.rejected > d.source
        ? ` (the source lists ${d.seen + d.rejected - d.source} fewer than the warehouse saw: customers removed at the source?)`
        : '';
    lines.push(
      `customer directory ${d.from}..${d.through}: ${d.source} customers at the source, ${held}${d.missingTotal ? `, ${d.missingTotal} missing from accounts` : ''}${extra}`,
    );
  }
  if (d.notLoaded)
    lines.push(
      `customer directory: accounts windows from ${d.notLoaded.start} on are not loaded (run or backfill them)`,
    );
  if (d.cannotProve) lines.push(`customer directory: ${d.cannotProve}`);
  else if (!d.gap) lines.push('customer directory: complete');
  return lines;
}

/** `loyalty-etl verify` and its flags. */
export function registerVerify(program: Command): void {
  withRangeFlags(
    withJobFlags(
      program
        .command('verify')
        .description(
          "compare the warehouse with the source's counts per window, and the customer directory; exit 4 on gaps",
        ),
    ),
  )
    .option('--json', 'machine-readable output')
    .action(verifyCommand);
}
