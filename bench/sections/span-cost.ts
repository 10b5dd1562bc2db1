/**
 * The cost of one commit as a backfill grows: DAYS one-day spans of synthetic survey answers (five questions: an NPS,
 * a decimal, yes/no, a date, free text) or account records (five custom fields of the same kinds, 50,000 customers
 * served again and again) into a fresh DuckDB warehouse, each span one commit. A span's work is the same throughout;
 * what grows from the first ten spans to the last ten is what a commit does in proportion to the tables rather
 * than to the span. `BENCH_SPAN_DAYS` sets DAYS (default 150).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDestination } from '../../src/load/warehouses.js';
import { offlineApi } from '../../test/helpers/offline-api.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadSpan } from '../../src/pipeline/load-span.js';
import { accountsStream } from '../../src/streams/accounts.js';
import type { StreamContext, StreamDefinition } from '../../src/streams/stream.js';
import { surveysStream } from '../../src/streams/surveys.js';
import type { BenchCheck, BenchSection } from '../support/bench-section.js';
import { unlessSmoke } from '../support/bench-mode.js';

type Kind = 'surveys' | 'accounts';
const DAYS = unlessSmoke(Number(process.env.BENCH_SPAN_DAYS ?? 150), 12);
const PER_DAY: Record<Kind, number> = { surveys: unlessSmoke(600, 20), accounts: unlessSmoke(400, 20) };
/** The last ten commits may cost this much more than the first ten: a commit's work follows its span. */
const GROWTH_TARGET = 1.25;
const CUSTOMERS = 50_000;
const QUESTIONS = {
  'How likely are you to recommend us?': 'nps',
  'How much did you spend?': 'spent',
  'Did you find it?': 'found',
  'When did you visit?': 'visited',
  'Anything else?': 'note',
};

export const spanCost: BenchSection = {
  name: 'span-cost',
  title: `CPU ms of a one-day span's commit, first ten against last ten of ${DAYS}, surveys and accounts into DuckDB (target: last ≤ ${GROWTH_TARGET} × first)`,
  async run() {
    const rows: Array<Record<string, string | number>> = [];
    const checks: BenchCheck[] = [];
    for (const kind of ['surveys', 'accounts'] as const) {
      const m = await measure(kind, DAYS, PER_DAY[kind]);
      rows.push({
        workload: kind,
        'records a day': PER_DAY[kind],
        'rows at the end': m.rows,
        'first 10, cpu ms': m.first10,
        'last 10, cpu ms': m.last10,
        'whole, cpu s': m.totalCpuS,
      });
      const growth = m.last10 / Math.max(1, m.first10);
      checks.push({
        name: `${kind}: a commit's cost does not grow with the tables`,
        passed: growth <= GROWTH_TARGET,
        detail: `last ten ${m.last10} ms against first ten ${m.first10} ms: ${growth.toFixed(2)}×`,
      });
    }
    return {
      settings: { days: DAYS, perDay: PER_DAY, customers: CUSTOMERS },
      rows,
      checks,
      notes: ['CPU of the process, DuckDB threads included, mean per span'],
    };
  },
};

async function measure(
  kind: Kind,
  days: number,
  perDay: number,
): Promise<{ rows: number; first10: number; last10: number; totalCpuS: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'loyalty-bench-span-cost-'));
  const destination = await openDestination({ type: 'duckdb', path: join(dir, 'warehouse.duckdb'), schema: 'main' });
  try {
    // nothing is asked of the source: every span's records are handed to the loader
    const api = offlineApi();
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
    const stream = kind === 'surveys' ? surveysStream : accountsStream;
    const cpu: number[] = [];
    for (let d = 0; d < days; d++) {
      const day = dayOf(d);
      const batch = records(kind, d, perDay);
      const inMemory: StreamDefinition = {
        ...stream,
        extract: async function* () {
          yield { windowStart: day, records: batch, restart: false };
        },
      };
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
      cpu.push((used.user + used.system) / 1000);
    }
    const [{ n }] = (await destination.withConnection((conn) =>
      conn.all<{ n: number }>(
        `SELECT COUNT(*) AS n FROM ${kind === 'surveys' ? 'survey_answers' : 'account_custom_fields'}`,
      ),
    )) as [{ n: number }];
    return {
      rows: Number(n),
      first10: mean(cpu.slice(0, 10)),
      last10: mean(cpu.slice(-10)),
      totalCpuS: Math.round(cpu.reduce((x, y) => x + y, 0)) / 1000,
    };
  } finally {
    await destination.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const mean = (a: number[]) => Math.round(a.reduce((x, y) => x + y, 0) / a.length);
const dayOf = (d: number) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 10);
const two = (n: number) => String(n).padStart(2, '0');

/** Day `d`'s records: survey answer elements, or accounts with custom fields of the five kinds. */
function records(kind: Kind, d: number, perDay: number): unknown[] {
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
