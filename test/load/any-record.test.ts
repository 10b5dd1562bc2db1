import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadSpan } from '../../src/pipeline/load-span.js';
import { accountsStream } from '../../src/streams/accounts.js';
import { loyaltyPostingsStream } from '../../src/streams/loyalty-postings.js';
import type { StreamContext, StreamDefinition } from '../../src/streams/stream.js';
import { surveysStream } from '../../src/streams/surveys.js';
import { testDestinations } from '../helpers/destinations.js';
import { offlineApi } from '../helpers/offline-api.js';

const WINDOW = { start: '2024-03-01', end: '2024-03-01' };

/** Any JSON-ish value a broken source could send in a field. */
const anyValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom(
    '',
    'NULL',
    'null',
    '2024-03-01 10:00:00',
    '2024-02-30 10:00:00',
    '0000-01-01 00:00:00',
    '9999-12-31 23:59:59 UTC',
    '2024-03-01',
    '-1',
    '1e309',
    '12.34567',
    '  ',
  ),
  fc.double(),
  fc.integer(),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
);
const anyKey = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constantFrom('select', '"', "'; DROP TABLE x;--", 'a'.repeat(300), 'Ünï', '\\N', 'tab\there'),
);

/** A valid record with any of its fields replaced by anything, and unknown fields added. */
function mutated(base: Record<string, unknown>, mapField?: string): fc.Arbitrary<Record<string, unknown>> {
  const fields = Object.keys(base);
  return fc
    .record({
      replace: fc.dictionary(fc.constantFrom(...fields), anyValue, { maxKeys: 3 }),
      extra: fc.dictionary(anyKey, anyValue, { maxKeys: 2 }),
      drop: fc.subarray(fields, { maxLength: 2 }),
      map: fc.dictionary(anyKey, anyValue, { maxKeys: 4 }),
    })
    .map(({ replace, extra, drop, map }) => {
      const record: Record<string, unknown> = { ...extra, ...base, ...replace };
      if (mapField && !(mapField in replace)) record[mapField] = map;
      for (const f of drop) delete record[f];
      return record;
    });
}

const account = {
  customerId: 'C1',
  phone: '3069',
  email: 'a@b.c',
  first: 'A',
  last: 'B',
  birthdate: '1990-01-01',
  source: 'pos',
  profileSet: '2024-03-01 10:00:00',
  country: 'GR',
  customerSince: '2020-01-01 10:00:00 UTC',
  memberSince: null,
  nationality: 'NULL',
  gender: 'F',
  city: '',
  language: 'el',
  customFieldMap: {},
};
const answer = {
  first: 'A',
  last: null,
  phone: null,
  email: 'x',
  brand: 'b',
  branch: 'c',
  staff: null,
  operator: 'NULL',
  date: '2024-03-01 10:00:00',
  customerId: 'C1',
  questAnsMap: {},
  receipt: 'r',
  tierName: 't',
};
const posting = {
  tierOrder: 1,
  tierName: 'Bronze',
  credit: 1,
  creditValue: 0.1,
  debit: 0,
  debitValue: 0,
  awardOn: null,
  currency: 'EUR',
  postingDate: '2024-03-01T10:00:00.000+0000',
  txnDate: '2024-03-01T10:00:00.000+0000',
  receipt: 'r',
  branchName: 'b',
  brandName: 'c',
  countryIso: 'GR',
  country: 'Greece',
  type: 1,
  postingType: 1,
};

const cases: Array<{
  stream: StreamDefinition;
  records: fc.Arbitrary<unknown[]>;
  key: (rows: Record<string, unknown>) => string;
  examples?: unknown[][];
}> = [
  {
    stream: accountsStream,
    // NULs PostgreSQL refused, crashing the run: in a key the reject's message quotes, and in a customer id
    examples: [
      [{ ...account, customFieldMap: { '\u0000': {} } }],
      [{ ...account, customerId: 'C\u00001' }, account],
      // its day in the job's zone is in year 10000
      [{ ...account, profileSet: '9999-12-31 23:59:59 UTC' }],
    ],
    records: fc.array(
      mutated(account, 'customFieldMap').chain((r) =>
        fc
          .constantFrom('C1', 'C2', 'C3', '  C4 ')
          .map((id) => ('customerId' in r && typeof r.customerId === 'string' ? { ...r, customerId: id } : r)),
      ),
      { maxLength: 25 },
    ),
    key: (r) => String(r.customer_id),
  },
  {
    stream: surveysStream,
    records: fc.array(
      fc
        .record({
          answer: mutated(answer, 'questAnsMap'),
          questions: fc.oneof(fc.dictionary(anyKey, fc.string({ maxLength: 8 }), { maxKeys: 3 }), anyValue),
        })
        .map(({ answer, questions }) => ({ answers: [answer], questions })),
      { maxLength: 25 },
    ),
    key: (r) => String(r.response_id),
    examples: [[{ answers: [{ ...answer, customerId: 'C\u00001' }], questions: {} }]],
  },
  {
    stream: loyaltyPostingsStream,
    records: fc.array(
      mutated(posting).map((p) => ({ customerId: 'C1', posting: p })),
      { maxLength: 25 },
    ),
    key: (r) => String(r.posting_id),
  },
];

describe.each(testDestinations)('any record, into $name', (target) => {
  let destination: Destination;
  beforeAll(async () => {
    destination = await openDestination((await target.fresh()).config);
  });
  afterAll(async () => destination.close());

  it.each(cases)(
    '$stream.name: never crashes; every record ends in its table or in _etl_rejects, once',
    async ({ stream, records, key, examples = [] }) => {
      const api = offlineApi();
      const jobConfig = {
        streams: [stream.name],
        window_days: 1,
        lookback_days: 0,
        first_day: WINDOW.start,
        reject_threshold: 1,
        sweep_days: 7,
        postings: { customers: 'all' as const, max_span_days: 1 },
      };
      let run = 0;
      await fc.assert(
        fc.asyncProperty(records, async (batch) => {
          const runId = `${stream.name}-${++run}`;
          // records served from memory: no source to count an empty window at (countRange), and the window holds only
          // what this batch loads (a postings window's count includes the rows of customers the load did not ask)
          const { countRange: _uncounted, ...served } = stream;
          await destination.withConnection((conn) =>
            conn.run(`DELETE FROM ${conn.schemaSql}."${stream.tables[0]!.name}"`),
          );
          const inMemory: StreamDefinition = {
            ...served,
            extract: async function* () {
              yield { windowStart: WINDOW.start, records: batch, restart: false };
            },
          };
          const ctx: StreamContext = {
            api,
            pageSize: 100,
            concurrency: 1,
            timezone: 'Europe/Athens',
            job: 'prop',
            jobConfig,
            logger: silentLogger,
          };
          // what the normalizer accepts is what must be in the table; the rest must be rejected
          const normalize = stream.normalizer(ctx);
          const accepted = new Set<string>();
          let rejected = 0;
          for (const raw of batch) {
            try {
              accepted.add(key(Object.values(normalize(raw, WINDOW.start))[0]![0]!));
            } catch {
              rejected++;
            }
          }
          const load = () =>
            loadSpan(
              inMemory,
              [WINDOW],
              ctx,
              destination,
              { job: 'prop', runId, firstDay: WINDOW.start, rejectThreshold: 1 },
              silentLogger,
            );
          if (batch.length > 0 && rejected === batch.length) {
            // a window whose every record is rejected fails loudly, naming the first reason, whatever its size
            await expect(load()).rejects.toThrow(/all \d+ records rejected \(the first: /);
            return;
          }
          const [counts] = await load();
          expect(counts!.rejected).toBe(rejected);
          expect(counts!.loaded).toBe(accepted.size);
          await destination.withConnection(async (conn) => {
            const table = stream.tables[0]!;
            const rows = await conn.all<Record<string, unknown>>(
              `SELECT ${table.key.map((k) => `"${k}"`).join(', ')} FROM ${conn.schemaSql}."${table.name}" WHERE "_run_id" = $1`,
              [runId],
            );
            const stored = await conn.all<{ payload: string }>(
              `SELECT payload FROM ${conn.schemaSql}._etl_rejects WHERE job = 'prop' AND stream = $1`,
              [stream.name],
            );
            expect(stored.length).toBe(rejected);
            expect(rows.length).toBe(accepted.size);
            expect(new Set(rows.map(key))).toEqual(accepted);
          });
        }),
        { numRuns: Number(process.env.PROPERTY_RUNS ?? 12), examples: examples.map((batch) => [batch] as [unknown[]]) },
      );
    },
  );
});
