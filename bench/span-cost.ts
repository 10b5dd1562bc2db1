/**
 * `npx tsx bench/span-cost.ts surveys|accounts DAYS RECORDS_PER_DAY`: loads DAYS one-day spans of synthetic survey
 * answers (five questions: an NPS, a decimal, yes/no, a date, free text) or account records (five custom fields of
 * the same kinds, 50,000 customers served again and again) into a fresh DuckDB warehouse, each span one commit, and
 * prints one JSON line: the rows of the long table at the end, and the mean wall and CPU milliseconds of the first
 * and of the last ten spans. A span's work is the same throughout; what grows from the first ten to the last ten is
 * what a commit does in proportion to the tables rather than to the span.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDestination } from '../src/load/open-destination.js';
import { silentLogger } from '../src/log/logger.js';
import { loadSpan } from '../src/pipeline/load-span.js';
import { HttpClient } from '../src/source/http-client.js';
import { LoyaltyApi } from '../src/source/loyalty-api.js';
import { accountsStream } from '../src/streams/accounts.js';
import type { StreamContext, StreamDefinition } from '../src/streams/stream.js';
import { surveysStream } from '../src/streams/surveys.js';

const [kind, daysArg, perDayArg] = process.argv.slice(2);
if ((kind !== 'surveys' && kind !== 'accounts') || !Number(daysArg) || !Number(perDayArg)) {
  process.stderr.write('usage: npx tsx bench/span-cost.ts surveys|accounts DAYS RECORDS_PER_DAY\n');
  process.exit(2);
}
const days = Number(daysArg);
const perDay = Number(perDayArg);
const CUSTOMERS = 50_000;
const QUESTIONS = {
  'How likely are you to recommend us?': 'nps',
  'How much did you spend?': 'spent',
  'Did you find it?': 'found',
  'When did you visit?': 'visited',
  'Anything else?': 'note',
};

const dir = mkdtempSync(join(tmpdir(), 'span-cost-'));
const destination = await openDestination({ type: 'duckdb', path: join(dir, 'warehouse.duckdb'), schema: 'main' });
// nothing is asked of the source: every span's records are handed to the loader
const api = new LoyaltyApi(
  new HttpClient({
    baseUrl: 'http://127.0.0.1:9',
    timeoutMs: 100,
    retries: 0,
    requestsPerSecond: 1,
    concurrency: 1,
    logger: silentLogger,
  }),
);
const ctx: StreamContext = {
  api,
  pageSize: 500,
  concurrency: 1,
  timezone: 'UTC',
  job: 'cost',
  logger: silentLogger,
  jobConfig: {
    streams: [],
    window_days: 1,
    lookback_days: 0,
    first_day: '2024-01-01',
    reject_threshold: 1,
    sweep_days: 7,
    postings: { customers: 'all', max_span_days: 1 },
  },
};

const dayOf = (d: number) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 10);
const two = (n: number) => String(n).padStart(2, '0');

function records(d: number): unknown[] {
  const day = dayOf(d);
  return Array.from({ length: perDay }, (_, i) => {
    const n = d * perDay + i;
    const answers = {
      nps: String(n % 11),
      spent: `${n % 100}.5`,
      found: n % 3 ? 'yes' : 'no',
      visited: `2023-0${1 + (n % 9)}-1${n % 10}`,
      note: `text ${n}`,
    };
    if (kind === 'surveys')
      return {
        questions: QUESTIONS,
        answers: [
          {
            date: `${day} ${two(8 + (i % 12))}:${two(i % 60)}:${two(Math.floor(i / 60) % 60)}`,
            customerId: `C${n % CUSTOMERS}`,
            questAnsMap: answers,
          },
        ],
      };
    const fields = {
      score: String(n % 97),
      spent: `${n % 100}.25`,
      member: n % 2 ? 'yes' : 'no',
      visited: `2023-0${1 + (n % 9)}-1${n % 10}`,
      note: `text ${n % 13}`,
    };
    return { customerId: `C${n % CUSTOMERS}`, profileSet: `${day}T08:00:00Z`, customFieldMap: fields };
  });
}

const stream = kind === 'surveys' ? surveysStream : accountsStream;
const wall: number[] = [];
const cpu: number[] = [];
for (let d = 0; d < days; d++) {
  const day = dayOf(d);
  const batch = records(d);
  const inMemory: StreamDefinition = {
    ...stream,
    extract: async function* () {
      yield { windowStart: day, records: batch, restart: false };
    },
  };
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await loadSpan(
    inMemory,
    [{ start: day, end: day }],
    ctx,
    destination,
    { job: 'cost', runId: `r${d}`, firstDay: '2024-01-01', rejectThreshold: 1 },
    silentLogger,
  );
  const used = process.cpuUsage(cpuBefore);
  wall.push(performance.now() - started);
  cpu.push((used.user + used.system) / 1000);
}

const mean = (a: number[]) => Math.round(a.reduce((x, y) => x + y, 0) / a.length);
const [{ n }] = (await destination.withConnection((conn) =>
  conn.all<{ n: number }>(
    `SELECT COUNT(*) AS n FROM ${kind === 'surveys' ? 'survey_answers' : 'account_custom_fields'}`,
  ),
)) as [{ n: number }];
await destination.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({
    kind,
    days,
    perDay,
    rows: Number(n),
    first10: { wallMs: mean(wall.slice(0, 10)), cpuMs: mean(cpu.slice(0, 10)) },
    last10: { wallMs: mean(wall.slice(-10)), cpuMs: mean(cpu.slice(-10)) },
    totalCpuS: (mean(cpu) * cpu.length) / 1000,
    loadAverage: loadavg().map((x) => Number(x.toFixed(1))),
  })}\n`,
);
