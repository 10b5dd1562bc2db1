import { beforeAll, describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import type { Emulator } from '../../src/emulator/index.js';
import { PROFILES, STAFF_ONLY_FIELD } from '../../src/emulator/model/profiles.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs } from '../helpers/cli.js';
import { testDestinations, unpublished } from '../helpers/destinations.js';
import {
  readPostings,
  readSurveyResponses,
  sortedByJson,
  surveyPivotMismatches,
  withWarehouse,
} from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-04-10';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'];

function postingsConfig(customers: string) {
  return `    postings:\n      customers: ${customers}\n      max_span_days: 14\n`;
}

describe.each(testDestinations)('surveys and loyalty postings into $name', (target) => {
  const data = { seed: 23, accounts: 120, startDate: START, endDate: END, timezone: TZ, port: 0 };
  const newest = useEmulator(data);
  const oldest = useEmulator({ ...data, postingsOrder: 'oldest-first' });
  /** A backfill of every customer's postings, listed newest first: the first test's warehouse, the others' yardstick. */
  let reference: { config: DestinationSettings; file: string; postingsRequests: number };
  beforeAll(async () => {
    const { config, file } = await backfill(newest);
    reference = { config, file, postingsRequests: newest.stats.requests('/accounts/loyalty/postings') };
  });

  async function backfill(emulator: Emulator, customers = 'all', extra: { windowDays?: number } = {}) {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: STREAMS,
      postings: postingsConfig(customers),
      pageSize: 20,
      windowDays: 5,
      ...extra,
    });
    emulator.stats.reset();
    await backfillCommand({ config: file, from: START, to: END, concurrency: '3' });
    return { config, file };
  }

  it('loads surveys and postings equal to the ground truth, and re-running changes nothing', async () => {
    const { config, file } = reference;
    const truthResponses = sortedByJson([...newest.truth.surveyResponses(START, END)].map((r) => ({ ...r })));
    const truthPostings = sortedByJson([...newest.truth.postings(START, END)].map((p) => ({ ...p })));
    const snapshot = () =>
      withWarehouse(config, async (conn) => ({
        responses: sortedByJson(await readSurveyResponses(conn)),
        postings: sortedByJson(await readPostings(conn)),
        ids: await conn.all(`SELECT response_id FROM survey_responses ORDER BY 1`),
        postingIds: await conn.all(`SELECT posting_id FROM loyalty_postings ORDER BY 1`),
      }));
    const first = await snapshot();
    expect(first.responses.length).toBe(truthResponses.length);
    expect(first.responses).toEqual(truthResponses);
    expect(first.postings.length).toBe(truthPostings.length);
    expect(first.postings).toEqual(truthPostings);

    // the dataset has the quirks that make this hard
    const json = (x: unknown) => JSON.stringify(x);
    expect(truthPostings.length - new Set(truthPostings.map(json)).size).toBeGreaterThan(0); // exact duplicates, kept
    const emailOnly = new Set(
      [...newest.truth.customers(END)].filter((c) => c.phone === null).map((c) => c.customer_id),
    );
    expect(truthPostings.some((p) => emailOnly.has(p.customer_id as string))).toBe(true);
    expect(truthResponses.some((r) => Object.values(r.answers as object).includes(null))).toBe(true);
    expect(new Set(truthResponses.map((r) => json(r.questions))).size).toBeGreaterThan(1);

    await withWarehouse(config, async (conn) => {
      expect(await surveyPivotMismatches(conn)).toEqual([]);
      const [sums] = await conn.all<{ credit: string; debit: string }>(
        `SELECT CAST(SUM(credit) AS VARCHAR) AS credit, CAST(SUM(debit) AS VARCHAR) AS debit FROM loyalty_postings`,
      );
      const truthCredit = truthPostings.reduce((s, p) => s + (p.credit as number), 0);
      expect(Number(sums!.credit)).toBeCloseTo(truthCredit, 2);
      expect(Number(sums!.debit)).toBeCloseTo(
        truthPostings.reduce((s, p) => s + (p.debit as number), 0),
        2,
      );
      // every custom-field column can be traced to its profile field
      const unmapped = await conn.all(
        `SELECT c.source_key FROM _etl_columns c WHERE c.table_name = 'accounts' AND NOT EXISTS (SELECT 1 FROM profile_fields f WHERE f.name = c.source_key)`,
      );
      expect(unmapped).toEqual([]);
      // reference data holding NUL characters is stored without them (PostgreSQL's text cannot hold U+0000)
      const profiles = await conn.all<{ profile_id: number | string; label: string }>(
        'SELECT profile_id, label FROM profiles ORDER BY profile_id',
      );
      expect(profiles.map((p) => [Number(p.profile_id), p.label])).toEqual(PROFILES.map((p) => [p.id, p.label]));
      const staffOnly = await conn.all<{ name: string; label: string; options: unknown; definition: unknown }>(
        `SELECT name, label, CAST(options AS VARCHAR) AS options, CAST(definition AS VARCHAR) AS definition FROM profile_fields WHERE profile_id = 2 AND name LIKE 'badge%'`,
      );
      expect(staffOnly).toHaveLength(1);
      expect(staffOnly[0]!.name).toBe(STAFF_ONLY_FIELD.name.replaceAll('\u0000', ''));
      expect(staffOnly[0]!.label).toBe(STAFF_ONLY_FIELD.label.replaceAll('\u0000', ''));
      expect(JSON.parse(staffOnly[0]!.options as string)).toEqual([{ key: 'desk', value: 'Frontdesk' }]);
      expect(JSON.parse(staffOnly[0]!.definition as string)).toMatchObject({
        name: 'badgenumber',
        label: 'Badge number',
      });
      // postings requests are reported per window and per run, and match what the source served
      const [windows] = await conn.all<{ n: string | number }>(
        `SELECT SUM(requests) AS n FROM _etl_windows WHERE stream = 'loyalty_postings'`,
      );
      expect(Number(windows!.n)).toBe(reference.postingsRequests);
      const [run] = await conn.all<{ n: string | number }>(
        `SELECT requests AS n FROM _etl_runs ORDER BY started_at DESC LIMIT 1`,
      );
      expect(Number(run!.n)).toBeGreaterThanOrEqual(Number(windows!.n));
    });

    await backfillCommand({ config: file, from: START, to: END, concurrency: '2' });
    expect(await snapshot()).toEqual(first);
  });

  it('stays complete when postings are listed oldest first (no early stop), and stops early when proven newest first', async () => {
    const newestRequests = reference.postingsRequests;
    const { config } = await backfill(oldest);
    const oldestRequests = oldest.stats.requests('/accounts/loyalty/postings');
    await withWarehouse(config, async (conn) => {
      expect(sortedByJson(await readPostings(conn))).toEqual(
        sortedByJson([...oldest.truth.postings(START, END)].map((p) => ({ ...p }))),
      );
    });
    expect(oldestRequests).toBeGreaterThan(newestRequests);
  });

  it('with customers: changed asks fewer customers and loads only true postings of the customers it asked', async () => {
    const allRequests = reference.postingsRequests;
    const { config } = await backfill(newest, 'changed');
    const changedRequests = newest.stats.requests('/accounts/loyalty/postings');
    expect(changedRequests).toBeLessThan(allRequests);
    const truth = [...newest.truth.postings(START, END)].map((p) => JSON.stringify(p));
    await withWarehouse(config, async (conn) => {
      const loaded = (await readPostings(conn)).map((p) => JSON.stringify(p));
      expect(loaded.length).toBeGreaterThan(0);
      const remaining = new Map<string, number>();
      for (const t of truth) remaining.set(t, (remaining.get(t) ?? 0) + 1);
      for (const l of loaded) {
        expect(remaining.get(l) ?? 0, l).toBeGreaterThan(0);
        remaining.set(l, remaining.get(l)! - 1);
      }
    });
  });

  describe('with exact duplicate survey answers', () => {
    const twice = useEmulator({
      seed: 23,
      accounts: 120,
      startDate: START,
      endDate: END,
      timezone: TZ,
      port: 0,
      surveysPerDay: 30,
      surveyDuplicateRate: 0.15,
    });

    const json = (x: unknown) => JSON.stringify(x);

    it('loads the exact truth in spans of several daily windows while listings change as they are read, each duplicate kept', async () => {
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: twice.url,
        timezone: TZ,
        firstDay: START,
        destination: config,
        streams: ['surveys'],
        pageSize: 3,
        windowDays: 1,
      });
      twice.faults.set({ driftRate: 0.5 });
      try {
        await backfillCommand({ config: file, from: START, to: END, concurrency: '2' });
        // a drifting listing is seen changed once: three of them leave at least one inside a span, not at its start
        expect(twice.faults.counts().driftedReads).toBeGreaterThanOrEqual(3);
      } finally {
        twice.faults.set({});
      }
      const truth = sortedByJson([...twice.truth.surveyResponses(START, END)].map((r) => ({ ...r })));
      expect(truth.length - new Set(truth.map(json)).size).toBeGreaterThan(10); // exact duplicates, each to be kept
      await withWarehouse(config, async (conn) => {
        const loaded = sortedByJson(await readSurveyResponses(conn));
        expect(loaded.length).toBe(truth.length);
        expect(loaded).toEqual(truth);
        expect(await surveyPivotMismatches(conn)).toEqual([]);
        // 41 daily windows committed in spans of up to 31 days: two commits (two loading times, or one when they meet in
        // the same millisecond), not one per window
        const [ledger] = await conn.all<{ windows: number | string; commits: number | string }>(
          `SELECT COUNT(*) AS windows, COUNT(DISTINCT finished_at) AS commits FROM _etl_windows WHERE stream = 'surveys' AND status = 'done'`,
        );
        expect(Number(ledger!.windows)).toBe(41);
        expect(Number(ledger!.commits)).toBeLessThanOrEqual(2);
      });
    });

    it('gives the same response and posting ids whether days load one window per span or many, and a re-load replaces them', async () => {
      const days = Array.from({ length: 7 }, (_, i) => `2024-03-${String(i + 1).padStart(2, '0')}`);
      const [from, to] = [days[0]!, days.at(-1)!];
      const jobs = (config: Awaited<ReturnType<typeof target.fresh>>['config']) =>
        emulatorJobs({
          url: twice.url,
          timezone: TZ,
          firstDay: START,
          destination: config,
          streams: STREAMS,
          postings: postingsConfig('all'),
          pageSize: 20,
          windowDays: 1,
        });
      const ids = (config: Awaited<ReturnType<typeof target.fresh>>['config']) =>
        withWarehouse(config, async (conn) => ({
          responses: await conn.all(`SELECT response_id FROM survey_responses ORDER BY 1`),
          answers: await conn.all(`SELECT response_id, question_code FROM survey_answers ORDER BY 1, 2`),
          postings: await conn.all(`SELECT posting_id FROM loyalty_postings ORDER BY 1`),
        }));
      // the same seven days: one backfill a day (every span one window), and one backfill of all seven (spans of many)
      const byDay = (await target.fresh()).config;
      // the copy for analysts is published by the two backfills after these seven, not by each of them
      const byDayUnpublished = jobs(unpublished(byDay));
      for (const day of days) await backfillCommand({ config: byDayUnpublished, from: day, to: day, concurrency: '2' });
      const byRange = (await target.fresh()).config;
      await backfillCommand({ config: jobs(byRange), from, to, concurrency: '2' });

      const truthResponses = [...twice.truth.surveyResponses(from, to)].map(json);
      const truthPostings = [...twice.truth.postings(from, to)].map(json);
      expect(truthResponses.length - new Set(truthResponses).size).toBeGreaterThan(0);
      expect(truthPostings.length - new Set(truthPostings).size).toBeGreaterThan(0);
      const first = await ids(byDay);
      expect(first.responses).toHaveLength(truthResponses.length);
      expect(first.postings).toHaveLength(truthPostings.length);
      expect(await ids(byRange)).toEqual(first);

      // the warehouse loaded a day at a time, loaded again in spans of many windows: the same keys, none twice
      await backfillCommand({ config: jobs(byDay), from, to, concurrency: '2' });
      expect(await ids(byDay)).toEqual(first);
    });
  });
});
