import { afterEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadSpan } from '../../src/pipeline/load-span.js';
import type { Window } from '../../src/plan/windows.js';
import type { ExtractedBatch, StreamContext, StreamDefinition } from '../../src/streams/stream.js';
import { surveysStream } from '../../src/streams/surveys.js';
import { testDestinations } from '../helpers/destinations.js';
import { offlineApi } from '../helpers/offline-api.js';

const A = { start: '2024-03-01', end: '2024-03-01' };
const B = { start: '2024-03-02', end: '2024-03-02' };
const questions = { 'How was it?': 'Q1' };
/** One answer record of the surveys listing, answered on `day`. */
const answer = (day: string, customerId: string) => ({
  questions,
  answers: [{ date: `${day} 10:00:00`, customerId, questAnsMap: { Q1: '5' } }],
});

const api = offlineApi();
const ctx: StreamContext = {
  api,
  pageSize: 100,
  concurrency: 1,
  timezone: 'Europe/Athens',
  job: 'occurrences',
  jobConfig: {
    streams: [],
    window_days: 1,
    lookback_days: 0,
    first_day: A.start,
    reject_threshold: 1,
    sweep_days: 7,
    postings: { customers: 'all', max_span_days: 1 },
  },
  logger: silentLogger,
};

describe.each(testDestinations)('occurrence keys of a span of several windows, into $name', (target) => {
  const open: Destination[] = [];
  afterEach(async () => {
    for (const d of open.splice(0)) await d.close();
  });

  /** Loads `span` from these batches, as the surveys stream would hand them over, into a fresh warehouse; returns its responses. */
  async function load(span: Window[], batches: ExtractedBatch[]): Promise<Array<{ response_id: string; w: string }>> {
    const destination = await openDestination((await target.fresh()).config);
    open.push(destination);
    const stream: StreamDefinition = {
      ...surveysStream,
      extract: async function* () {
        yield* batches;
      },
    };
    await loadSpan(
      stream,
      span,
      ctx,
      destination,
      { job: 'occurrences', runId: 'r', firstDay: A.start, rejectThreshold: 1 },
      silentLogger,
    );
    return destination.withConnection((conn) =>
      conn.all<{ response_id: string; w: string }>(
        `SELECT response_id, CAST("_window_start" AS VARCHAR) AS w FROM survey_responses ORDER BY 2, 1`,
      ),
    );
  }

  it("counts exact duplicates per window: a window read again starts its count afresh, the others' counts go on", async () => {
    const x = answer(A.start, 'C1');
    const y = answer(B.start, 'C2');
    // the batches of a span's windows may come interleaved (postings come so): A's duplicate pair is split by B's re-read
    const spanned = await load(
      [A, B],
      [
        { windowStart: A.start, records: [x], restart: false },
        { windowStart: B.start, records: [y, y], restart: false },
        {
          windowStart: B.start,
          records: [y, y],
          restart: true,
          reason: 'totalCount went from 2 on page 1 to 3 on page 2',
        },
        { windowStart: A.start, records: [x], restart: false },
      ],
    );
    expect(spanned.map((r) => r.w)).toEqual([A.start, A.start, B.start, B.start]);
    // the very keys each window gets in a span of its own
    const alone = [
      ...(await load([A], [{ windowStart: A.start, records: [x, x], restart: false }])),
      ...(await load([B], [{ windowStart: B.start, records: [y, y], restart: false }])),
    ];
    expect(spanned).toEqual(alone);
  });
});
