import { describe, expect, it } from 'vitest';
import { createApi, resolveJob } from '../../src/commands/job-session.js';
import type { DestinationSettings, StreamName } from '../../src/plan/job-plan.js';
import type { Destination, SpanLoad } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { silentLogger } from '../../src/log/logger.js';
import { runJob } from '../../src/pipeline/run-job.js';
import { planRange } from '../../src/plan/plan-windows.js';
import type { Window } from '../../src/plan/windows.js';
import { emulatorJobs } from '../helpers/cli.js';
import { duckdbTestDestination, testDestinations } from '../helpers/destinations.js';
import {
  readAccounts,
  readPostings,
  readSurveyResponses,
  sortedByJson,
  withWarehouse,
} from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-03-24';

/**
 * The real destination, counting the spans of each stream that are open (staged, not yet committed or
 * aborted) at once.
 */
function countingSpans(destination: Destination): { destination: Destination; peak: Map<string, number> } {
  const open = new Map<string, number>();
  const peak = new Map<string, number>();
  const counting = Object.create(destination) as Destination;
  counting.openSpan = async (request) => {
    const load = await destination.openSpan(request);
    const now = (open.get(request.stream) ?? 0) + 1;
    open.set(request.stream, now);
    peak.set(request.stream, Math.max(peak.get(request.stream) ?? 0, now));
    const closed = () => open.set(request.stream, open.get(request.stream)! - 1);
    const counted: SpanLoad = Object.create(load);
    counted.commit = (...args) => load.commit(...args).finally(closed);
    counted.abort = () => load.abort().finally(closed);
    return counted;
  };
  return { destination: counting, peak };
}

describe.each(testDestinations)('spans loaded at once into $name', (target) => {
  const emulator = useEmulator({ seed: 41, accounts: 90, startDate: START, endDate: END, timezone: TZ, port: 0 });

  it('postings stage two spans at a time, whatever the concurrency, and still load every posting', async () => {
    const { config: warehouse } = await target.fresh();
    let peak = new Map<string, number>();
    await runFourLanes(emulator.url, warehouse, START, END, 3, (opened) => {
      const counted = countingSpans(opened);
      peak = counted.peak;
      return counted.destination;
    });

    // eight postings spans of three days: both lanes busy at once, never more
    expect(peak.get('loyalty_postings')).toBe(2);
    const truth = sortedByJson([...emulator.truth.postings(START, END)].map((p) => ({ ...p })));
    expect(truth.length).toBeGreaterThan(100);
    await withWarehouse(warehouse, async (conn) => expect(sortedByJson(await readPostings(conn))).toEqual(truth));
  });
});

/**
 * The real destination, noting whether the appends of two spans ever interleave (a span appending again after
 * another one appended), and the most spans open at once.
 */
function stagingSpans(destination: Destination): {
  destination: Destination;
  seen: { interleaved: boolean; spansAtOnce: number };
} {
  let open = 0;
  let last: object | undefined;
  const done = new Set<object>();
  const seen = { interleaved: false, spansAtOnce: 0 };
  const counting = Object.create(destination) as Destination;
  counting.openSpan = async (request) => {
    const load = await destination.openSpan(request);
    const span = {};
    seen.spansAtOnce = Math.max(seen.spansAtOnce, ++open);
    const closed = () => open--;
    const counted: SpanLoad = Object.create(load);
    counted.append = async (table, rows) => {
      if (done.has(span)) seen.interleaved = true;
      if (last && last !== span) done.add(last);
      last = span;
      await load.append(table, rows);
    };
    counted.commit = (...args) => load.commit(...args).finally(closed);
    counted.abort = () => load.abort().finally(closed);
    return counted;
  };
  return { destination: counting, seen };
}

describe('the staged rows of the spans loaded at once into duckdb', () => {
  const START = '2024-01-01';
  const END = '2024-04-30';
  const emulator = useEmulator({ seed: 43, accounts: 60, startDate: START, endDate: END, timezone: TZ, port: 0 });

  it('with a staging_memory of nothing, are staged one span after the other, the oldest first, and every lane still loads every row', async () => {
    const { config: warehouse } = await duckdbTestDestination.fresh();
    let seen = { spansAtOnce: 0, interleaved: false };
    // a budget of nothing: only the oldest span in flight reads and stages, the others wait their turn
    await runFourLanes(
      emulator.url,
      warehouse,
      START,
      END,
      10,
      (opened) => {
        const staged = stagingSpans(opened);
        seen = staged.seen;
        return staged.destination;
      },
      { staging_memory: '0KB' },
    );

    // four months in month-long spans, four lanes: spans were open at once, and each staged all of its pages
    // in its turn, the oldest first, the next one only once it had read them all
    expect(seen.spansAtOnce).toBeGreaterThan(1);
    expect(seen.interleaved).toBe(false);
    await withWarehouse(warehouse, async (conn) => {
      const truthAccounts = new Map([...emulator.truth.accounts(START, END)].map((a) => [a.customer_id, { ...a }]));
      const accounts = await readAccounts(conn);
      expect(accounts.size).toBe(truthAccounts.size);
      for (const [id, expected] of truthAccounts) expect(accounts.get(id), id).toEqual(expected);
      const responses = sortedByJson([...emulator.truth.surveyResponses(START, END)].map((r) => ({ ...r })));
      expect(responses.length).toBeGreaterThan(20);
      expect(sortedByJson(await readSurveyResponses(conn))).toEqual(responses);
      const postings = sortedByJson([...emulator.truth.postings(START, END)].map((p) => ({ ...p })));
      expect(postings.length).toBeGreaterThan(100);
      expect(sortedByJson(await readPostings(conn))).toEqual(postings);
    });
  });
});

/**
 * A `run` of accounts, surveys and postings over [`start`, `end`] with four lanes, postings in spans of
 * `maxSpanDays`, through `wrap` of the warehouse `warehouse` opened (with `settings` over the jobs file's); its
 * windows must all load.
 */
async function runFourLanes(
  url: string,
  warehouse: DestinationSettings,
  start: string,
  end: string,
  maxSpanDays: number,
  wrap: (opened: Destination) => Destination,
  settings: Record<string, unknown> = {},
): Promise<void> {
  const file = emulatorJobs({
    url,
    timezone: TZ,
    firstDay: start,
    destination: warehouse,
    streams: ['accounts', 'surveys', 'loyalty_postings'],
    postings: `    postings:\n      max_span_days: ${maxSpanDays}\n`,
    pageSize: 20,
  });
  const { config, jobConfig, plan } = resolveJob({ config: file });
  const logger = silentLogger;
  const windows = planRange(jobConfig, start, end);
  const planned = new Map<StreamName, Window[]>(jobConfig.streams.map((s) => [s, windows]));
  const opened = await openDestination({ ...config.destination, ...settings } as DestinationSettings);
  try {
    const result = await runJob({
      plan,
      command: 'run',
      work: { kind: 'planned', windows: planned },
      concurrency: 4,
      api: createApi(config, logger),
      destination: wrap(opened),
      logger,
    });
    expect(result.failed).toEqual([]);
  } finally {
    await opened.close();
  }
}
