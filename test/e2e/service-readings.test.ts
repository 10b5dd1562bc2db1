import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import { startEmulator, type Emulator, type EmulatorResponse, type Middleware } from '../../src/emulator/index.js';
import { emulatorJobs } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const RANGE = { startDate: '2024-02-01', endDate: '2024-02-10' } as const;
const TZ = 'Europe/Athens';

/** The JSON body of a response, changed by `change`. */
async function rewriteJson(response: EmulatorResponse, change: (body: { data?: Array<Record<string, unknown>> }) => void): Promise<EmulatorResponse> {
  let text = '';
  if (typeof response.body === 'string') text = response.body;
  else for await (const chunk of response.body) text += chunk;
  const body = JSON.parse(text) as { data?: Array<Record<string, unknown>> };
  change(body);
  return { ...response, body: JSON.stringify(body) };
}

/** While set, the accounts export names `customerId` otherwise: every record lacks the field its key comes from. */
let renameKey = false;
const renamedKey: Middleware = async (request, next) => {
  const response = await next(request);
  if (!renameKey || request.path !== '/business-data/accounts' || response.status !== 200) return response;
  return rewriteJson(response, (body) => {
    for (const record of body.data ?? []) {
      record.accountId = record.customerId;
      delete record.customerId;
    }
  });
};

/** While set, an export leaves out its `end` day (a window of one day lists nothing). */
let exclusiveEnd = false;
const endExcluded: Middleware = async (request, next) => {
  if (!exclusiveEnd || !request.path.startsWith('/business-data/')) return next(request);
  const { start, end } = { start: request.query.get('start')!, end: request.query.get('end')! };
  if (start === end)
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pageNumber: 1, pageSize: 1, totalCount: 0, data: [] }) };
  const before = new Date(Date.parse(`${end}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  request.query.set('end', before);
  return next(request);
};

describe.each(testDestinations)('a service that reads the spec otherwise, into $name', (target) => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 41, accounts: 40, ...RANGE, timezone: TZ, port: 0, hooks: { middleware: [renamedKey, endExcluded] } });
  });
  afterAll(async () => emulator.close());

  it('rejects every record missing the field its key comes from, and fails each window of them, small as it is', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: RANGE.startDate, destination: config, streams: ['accounts'] });
    renameKey = true;
    try {
      await expect(backfillCommand({ config: file, from: RANGE.startDate, to: '2024-02-03', concurrency: '1' })).rejects.toThrow(
        /window\(s\) failed; first: accounts 2024-02-01: accounts 2024-02-01: all \d+ records rejected \(the first: customerId: is missing: accounts are keyed on it\)/,
      );
    } finally {
      renameKey = false;
    }
    await withWarehouse(config, async (conn) => {
      const windows = await conn.all<{ status: string }>(`SELECT DISTINCT status FROM _etl_windows`);
      expect(windows).toEqual([{ status: 'failed' }]);
      const [accounts] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM accounts`);
      expect(Number(accounts!.n)).toBe(0); // nothing keyed on NULL
    });
  });

  it('fails the windows of an export that leaves out its end day, where the source counts records, naming source.export_end', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: RANGE.startDate, destination: config, streams: ['accounts', 'surveys'] });
    exclusiveEnd = true;
    try {
      await expect(backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '1' })).rejects.toThrow(
        /accounts 2024-02-01\.\.2024-02-10: the source counts \d+ records in these days, but reading its windows found none; if the export leaves out its end day, set source\.export_end: exclusive/,
      );
    } finally {
      exclusiveEnd = false;
    }
    await withWarehouse(config, async (conn) => {
      const done = await conn.all<{ stream: string }>(`SELECT DISTINCT stream FROM _etl_windows WHERE status = 'done'`);
      expect(done).toEqual([]); // never recorded done with nothing
    });
  });
});
