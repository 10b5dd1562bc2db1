import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { CommandError } from '../../src/commands/exit-codes.js';
import { backfillCommand } from '../../src/commands/backfill.js';
import { verifyCommand } from '../../src/commands/verify.js';
import {
  startEmulator,
  type Emulator,
  type EmulatorResponse,
  type StartEmulatorOptions,
  type Middleware,
} from '../../src/emulator/index.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations, type TestDestination } from '../helpers/destinations.js';
import { LOYALTY_PROGRAM as PROGRAM, MORNING_AFTER } from '../helpers/loyalty-program.js';
import { readLoyaltyState, truthState } from '../helpers/loyalty-state-reader.js';
import { captureStdout } from '../helpers/stdout.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const RANGE = { startDate: '2024-02-01', endDate: '2024-02-10' } as const;
const TZ = 'Europe/Athens';
/** A small loyalty program, its clock the morning after its last day. */
const PROGRAM_OPTIONS = {
  seed: 43,
  accounts: 20,
  startDate: PROGRAM.start,
  endDate: PROGRAM.end,
  timezone: PROGRAM.timezone,
  port: 0,
  clock: () => MORNING_AFTER,
};

function serviceWith(options: StartEmulatorOptions): StartEmulatorOptions {
  return { seed: 41, accounts: 40, ...RANGE, timezone: TZ, port: 0, ...options };
}

function emulatorWith(options: StartEmulatorOptions): Promise<Emulator> {
  return startEmulator(serviceWith(options));
}

/** A run of `streams` over the whole program into a fresh warehouse of `target`; it must succeed. */
async function runProgram(target: TestDestination, url: string, streams: string[]) {
  const { config } = await target.fresh();
  const file = emulatorJobs({ url, timezone: TZ, firstDay: PROGRAM.start, destination: config, streams });
  const run = await runCli(['run', '--config', file, '--until', PROGRAM.end]);
  expect(run.code, run.stderr.slice(-800)).toBe(0);
  return { config, file, run };
}

/** The JSON body of a response, changed by `change`. */
async function rewriteJson(
  response: EmulatorResponse,
  change: (body: { data?: Array<Record<string, unknown>> }) => void,
): Promise<EmulatorResponse> {
  let text = '';
  if (typeof response.body === 'string') text = response.body;
  else for await (const chunk of response.body) text += chunk;
  const body = JSON.parse(text) as { data?: Array<Record<string, unknown>> };
  change(body);
  return { ...response, body: JSON.stringify(body) };
}

/** The accounts export names `customerId` otherwise: every record lacks the field its key comes from. */
const renamedKey: Middleware = async (request, next) => {
  const response = await next(request);
  if (request.path !== '/business-data/accounts' || response.status !== 200) return response;
  return rewriteJson(response, (body) => {
    for (const record of body.data ?? []) {
      record.clientRef = record.customerId;
      delete record.customerId;
    }
  });
};

describe.each(testDestinations)('a service that reads the spec otherwise, into $name', (target) => {
  it('rejects every record missing the field its key comes from, and fails each window of them, small as it is, keeping them in _etl_rejects', async () => {
    const emulator = await emulatorWith({ hooks: { middleware: [renamedKey] } });
    try {
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: RANGE.startDate,
        destination: config,
        streams: ['accounts'],
      });
      const failing =
        /window\(s\) failed; first: accounts 2024-02-01: accounts 2024-02-01: all (\d+) records rejected \(the first: customerId: is missing: accounts are keyed on it\)/;
      const first = await backfillCommand({
        config: file,
        from: RANGE.startDate,
        to: '2024-02-03',
        concurrency: '1',
      }).then(
        () => '',
        (error: Error) => error.message,
      );
      expect(first).toMatch(failing);
      const rejected = Number(failing.exec(first)![1]);
      // the rejects of the failed windows are there to read, with their payloads, one row per record
      const held = () =>
        withWarehouse(config, (conn) =>
          conn.all<{ w: string; run_id: string; payload: string; error: string }>(
            `SELECT CAST(window_start AS VARCHAR) AS w, run_id, payload, error FROM _etl_rejects ORDER BY 1`,
          ),
        );
      const kept = await held();
      const windows = await withWarehouse(config, async (conn) => {
        expect(await conn.all<{ status: string }>(`SELECT DISTINCT status FROM _etl_windows`)).toEqual([
          { status: 'failed' },
        ]);
        const [accounts] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM accounts`);
        expect(Number(accounts!.n)).toBe(0); // nothing keyed on NULL
        const failed = await conn.all<{ w: string }>(
          `SELECT CAST(window_start AS VARCHAR) AS w FROM _etl_windows WHERE status = 'failed' ORDER BY 1`,
        );
        return failed.map((f) => f.w);
      });
      expect(kept.filter((r) => r.w === '2024-02-01')).toHaveLength(rejected);
      expect([...new Set(kept.map((r) => r.w))]).toEqual(windows);
      for (const r of kept) {
        expect(JSON.parse(r.payload)).toHaveProperty('clientRef');
        expect(r.error).toBe('customerId: is missing: accounts are keyed on it');
      }
      // read again, the windows fail again, and their rejects replace those of the first reading
      await expect(
        backfillCommand({ config: file, from: RANGE.startDate, to: '2024-02-03', concurrency: '1' }),
      ).rejects.toThrow(failing);
      const again = await held();
      expect(again.map((r) => [r.w, r.payload]).sort()).toEqual(kept.map((r) => [r.w, r.payload]).sort());
      expect(new Set(again.map((r) => r.run_id)).size).toBe(1);
      expect(again[0]!.run_id).not.toBe(kept[0]!.run_id);
    } finally {
      await emulator.close();
    }
  });

  it('fails the windows of an export that leaves out its end day, where the source counts records, naming source.export_end', async () => {
    const emulator = await emulatorWith({ readings: { exportEnd: 'exclusive' } });
    try {
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: RANGE.startDate,
        destination: config,
        streams: ['accounts', 'surveys'],
      });
      await expect(
        backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '1' }),
      ).rejects.toThrow(
        /accounts 2024-02-01\.\.2024-02-10: the source counts \d+ records in these days, but reading its windows found none; if the export leaves out its end day, set source\.export_end: exclusive/,
      );
      await withWarehouse(config, async (conn) => {
        // never recorded done with nothing
        expect(
          await conn.all<{ stream: string }>(`SELECT DISTINCT stream FROM _etl_windows WHERE status = 'done'`),
        ).toEqual([]);
      });
    } finally {
      await emulator.close();
    }
  });
});

const LISTINGS = (['per-change', 'current'] as const).flatMap((listing) =>
  testDestinations.map((target) => ({ listing, target, name: target.name })),
);

describe.each(LISTINGS)('an accounts export that lists customers $listing, into $name', ({ listing, target }) => {
  const emulator = useEmulator(serviceWith({ readings: { accountsListing: listing } }));

  it('loads the ground truth, never backdates a version, and verify finds no gap until a customer is deleted, then names it', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: RANGE.startDate,
      destination: config,
      streams: ['accounts'],
      pageSize: 4,
    });
    await backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '2' });
    await withWarehouse(config, async (conn) => {
      const truth = new Map(
        [...emulator.truth.accounts(RANGE.startDate, RANGE.endDate)].map((a) => [a.customer_id, { ...a }]),
      );
      expect(await readAccounts(conn)).toEqual(truth);
      const versions = await conn.all<{ customer_id: string; valid_from: string; set_at: string | null }>(
        `SELECT customer_id, CAST(valid_from AS VARCHAR) AS valid_from, CAST(profile_set_at AS VARCHAR) AS set_at FROM accounts_history`,
      );
      expect(versions.length).toBeGreaterThanOrEqual(truth.size);
      const backdated = versions.filter(
        (v) =>
          v.set_at !== null &&
          v.valid_from <
            DateTime.fromSQL(v.set_at.replace(/\+00(:00)?$/, ''), { zone: 'UTC' })
              .setZone(TZ)
              .toISODate()!,
      );
      expect(backdated).toEqual([]);
    });

    const clean = await captureStdout(() =>
      verifyCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, stream: 'accounts' }),
    );
    expect(clean.error, clean.out).toBeUndefined();
    expect(clean.out).toMatch(/no gaps/);
    expect(clean.out).toMatch(/customer directory: complete/);

    const gone = [...emulator.truth.accounts(RANGE.startDate, RANGE.endDate)][0]!.customer_id;
    await withWarehouse(config, (conn) => conn.run(`DELETE FROM accounts WHERE customer_id = $1`, [gone]));
    const gap = await captureStdout(() =>
      verifyCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, stream: 'accounts' }),
    );
    expect(gap.error).toBeInstanceOf(CommandError);
    expect((gap.error as CommandError).exitCode).toBe(4);
    expect((gap.error as CommandError).message).toMatch(
      new RegExp(`customer directory: 1 customer\\(s\\) missing from accounts; first: ${gone} `),
    );
  });
});

describe.each(testDestinations)('listings whose order changes between page requests, into $name', (target) => {
  // enough customers for days of several survey elements (a listing of two is rotated alike by every request)
  const emulator = useEmulator(serviceWith({ accounts: 150, readings: { listingOrder: 'unstable' } }));

  /** Survey answers and postings the warehouse holds per window it recorded done, beside the truth of those windows. */
  async function doneWindowsAgainstTruth(config: Parameters<typeof withWarehouse>[0]) {
    return withWarehouse(config, async (conn) => {
      const done = await conn.all<{ stream: string; d: string; loaded: number | string }>(
        `SELECT stream, CAST(window_start AS VARCHAR) AS d, rows_loaded AS loaded FROM _etl_windows WHERE status = 'done' AND stream <> 'accounts' ORDER BY 1, 2`,
      );
      const held = (stream: string, d: string) =>
        conn.all<{ n: number | string }>(
          `SELECT COUNT(*) AS n FROM ${stream === 'surveys' ? 'survey_responses' : 'loyalty_postings'} WHERE _window_start = CAST($1 AS DATE)`,
          [d],
        );
      const out: Array<[string, string, number, number]> = [];
      for (const w of done) {
        const truth =
          w.stream === 'surveys'
            ? [...emulator.truth.surveyResponses(w.d, w.d)]
            : [...emulator.truth.postings(w.d, w.d)];
        out.push([w.stream, w.d, Number((await held(w.stream, w.d))[0]!.n), truth.length]);
      }
      return out;
    });
  }

  it('fails the keyless listings it cannot prove, loudly, and records no window done with records missing or twice', async () => {
    const { config } = await target.fresh();
    const jobs = (pageSize: number) =>
      emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: RANGE.startDate,
        destination: config,
        streams: ['accounts', 'surveys', 'loyalty_postings'],
        pageSize,
      });
    // the customers first, each window in one page; then surveys and postings one record a page
    await backfillCommand({ config: jobs(500), from: RANGE.startDate, to: RANGE.endDate, stream: 'accounts' });
    for (const stream of ['surveys', 'loyalty_postings']) {
      await expect(
        backfillCommand({ config: jobs(1), from: RANGE.startDate, to: RANGE.endDate, stream, concurrency: '2' }),
        stream,
      ).rejects.toThrow(
        /the listing kept changing while it was read, 3 times in a row \(read 1: two reads of pages 1\.\.\d+ \(totalCount \d+ both times\) held different records/,
      );
    }
    for (const [stream, day, held, truth] of await doneWindowsAgainstTruth(config))
      expect(held, `${stream} ${day}`).toBe(truth);
  });

  it('with pages that hold each listing whole, loads the exact truth', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: RANGE.startDate,
      destination: config,
      streams: ['accounts', 'surveys', 'loyalty_postings'],
      pageSize: 500,
    });
    await backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '2' });
    const windows = await doneWindowsAgainstTruth(config);
    expect(windows.length).toBe(20);
    for (const [stream, day, held, truth] of windows) expect(held, `${stream} ${day}`).toBe(truth);
  });
});

describe.each(testDestinations)('a voucher with one field the pipeline cannot read, into $name', (target) => {
  /** The customer (by phone or e-mail) whose first voucher is served with a `value` that is no number. */
  let spoiled: string | undefined;
  let code: string | undefined;
  const oneBadValue: Middleware = async (request, next) => {
    const response = await next(request);
    if (request.path !== '/accounts/vouchers/get' || response.status !== 200) return response;
    const who = request.query.get('phone') || request.query.get('email') || '';
    const text = typeof response.body === 'string' ? response.body : '';
    const vouchers = JSON.parse(text) as Array<Record<string, unknown>>;
    if (vouchers.length < 2 || (spoiled !== undefined && spoiled !== who)) return response;
    spoiled = who;
    code = String(vouchers[0]!.code);
    vouchers[0]!.value = 'lots';
    return { ...response, body: JSON.stringify(vouchers) };
  };
  const emulator = useEmulator({ ...PROGRAM_OPTIONS, hooks: { middleware: [oneBadValue] } });

  it('loads the voucher and every other voucher of its customer, the field NULL, and keeps the raw value and the problem', async () => {
    const { config, file, run } = await runProgram(target, emulator.url, ['accounts', 'vouchers']);
    expect(run.stdout).toMatch(
      /^vouchers: .*, 0 rejected, 1 field loaded as NULL \(unreadable; see _etl_field_rejects\)$/m,
    );
    await withWarehouse(config, async (conn) => {
      const truth = truthState(emulator.truth).vouchers;
      const [held] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM vouchers`);
      expect(Number(held!.n)).toBe(truth.length);
      const fields = await conn.all<{
        stream: string;
        record_key: string;
        field: string;
        raw_value: string;
        error: string;
      }>(`SELECT stream, record_key, field, raw_value, error FROM _etl_field_rejects`);
      expect(fields).toHaveLength(1);
      expect(fields[0]).toMatchObject({ stream: 'vouchers', field: 'value', raw_value: '"lots"' });
      expect(fields[0]!.record_key).toMatch(new RegExp(` ${code}$`));
      const [bad] = await conn.all<{ value: string | null }>(
        `SELECT CAST(value AS VARCHAR) AS value FROM vouchers WHERE code = $1`,
        [code],
      );
      expect(bad!.value).toBeNull();
      expect(await conn.all(`SELECT * FROM _etl_rejects`)).toEqual([]);
    });
    const status = await runCli(['status', '--config', file]);
    expect(status.stdout).toMatch(/NULL fields/);
    expect(status.stdout).toMatch(/^vouchers\s.*\s1\s+\d+\s*$/m);
  });
});

describe.each(testDestinations)(
  'a posting and a loyalty answer with one field the pipeline cannot read, into $name',
  (target) => {
    /** The customers (by phone or e-mail) whose first posting's `credit`, and whose loyalty tier's `expiry`, are spoiled. */
    let postingsOf: string | undefined;
    let loyaltyOf: string | undefined;
    const oneBadField: Middleware = async (request, next) => {
      const response = await next(request);
      if (response.status !== 200) return response;
      const who = request.query.get('phone') || request.query.get('email') || '';
      if (request.path === '/accounts/loyalty/postings') {
        if (postingsOf !== undefined && postingsOf !== who) return response;
        return rewriteJson(response, (body) => {
          if (!body.data?.length) return;
          postingsOf = who;
          body.data[0]!.credit = 'lots';
        });
      }
      if (request.path === '/accounts' && request.query.get('includeLoyalty') === 'true') {
        if (loyaltyOf !== undefined && loyaltyOf !== who) return response;
        return rewriteJson(response, (body) => {
          const loyalty = (body as { loyalty?: { tier?: Record<string, unknown> } }).loyalty;
          if (!loyalty?.tier) return;
          loyaltyOf = who;
          loyalty.tier.expiry = 'soon';
        });
      }
      return response;
    };
    const emulator = useEmulator({ ...PROGRAM_OPTIONS, hooks: { middleware: [oneBadField] } });

    it('loads the posting and the answer, that field NULL, and keeps the raw value and the problem', async () => {
      const { config, run } = await runProgram(target, emulator.url, [
        'accounts',
        'loyalty_postings',
        'loyalty_status',
      ]);
      expect(postingsOf).toBeDefined();
      expect(loyaltyOf).toBeDefined();
      expect(run.stdout).toMatch(
        /^loyalty_postings: .*, 1 field loaded as NULL \(unreadable; see _etl_field_rejects\)$/m,
      );
      expect(run.stdout).toMatch(
        /^loyalty_status: .*, 1 field loaded as NULL \(unreadable; see _etl_field_rejects\)$/m,
      );
      await withWarehouse(config, async (conn) => {
        expect(await conn.all(`SELECT * FROM _etl_rejects`)).toEqual([]);
        const fields = await conn.all<{ stream: string; record_key: string; field: string; raw_value: string }>(
          `SELECT stream, record_key, field, raw_value FROM _etl_field_rejects ORDER BY stream`,
        );
        expect(fields).toEqual([
          { stream: 'loyalty_postings', record_key: expect.any(String), field: 'credit', raw_value: '"lots"' },
          { stream: 'loyalty_status', record_key: expect.any(String), field: 'tier.expiry', raw_value: '"soon"' },
        ]);
        // every posting loads, the spoiled one with its credit NULL
        const [held] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM loyalty_postings`);
        expect(Number(held!.n)).toBe([...emulator.truth.postings(PROGRAM.start, PROGRAM.end)].length);
        const [spoiled] = await conn.all<{ credit: string | null }>(
          `SELECT CAST(credit AS VARCHAR) AS credit FROM loyalty_postings WHERE posting_id = $1`,
          [fields[0]!.record_key],
        );
        expect(spoiled).toEqual({ credit: null });
        // the loyalty state is the truth's, but for the spoiled customer's tier expiry
        const customer = fields[1]!.record_key;
        const truth = truthState(emulator.truth).status.map((s) =>
          s.customer_id === customer ? { ...s, tier_expires_at: null } : s,
        );
        expect(truth.some((s) => s.customer_id === customer)).toBe(true);
        expect((await readLoyaltyState(conn)).status).toEqual(truth);
      });
    });
  },
);

describe.each(testDestinations)('a source whose counts exceed what its listings hold, into $name', (target) => {
  /** While set, every count (a page of one record) says one record more than the listing holds. */
  let inflate = false;
  const inflatedCount: Middleware = async (request, next) => {
    const response = await next(request);
    if (
      !inflate ||
      request.path !== '/business-data/accounts' ||
      request.query.get('size') !== '1' ||
      response.status !== 200
    )
      return response;
    return rewriteJson(response, (body) => void ((body as { totalCount: number }).totalCount += 1));
  };
  const emulator = useEmulator(serviceWith({ endDate: '2024-02-28', hooks: { middleware: [inflatedCount] } }));

  it("verify invents no gap: each window's listing proves itself, and where too many are left to read it says it cannot prove, exit 6", async () => {
    const { config, warehouse } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: RANGE.startDate,
      destination: config,
      streams: ['accounts'],
    });
    await backfillCommand({ config: file, from: RANGE.startDate, to: '2024-02-28' });
    expect(
      (
        await runCli(['verify', '--config', file, '--from', RANGE.startDate, '--to', '2024-02-28'], {
          LOYALTY_WAREHOUSE: warehouse,
        })
      ).code,
    ).toBe(0);
    inflate = true;
    try {
      const verify = await runCli(['verify', '--config', file, '--from', RANGE.startDate, '--to', '2024-02-28'], {
        LOYALTY_WAREHOUSE: warehouse,
      });
      // every window's count says one more; the windows' own listings hold what the warehouse holds
      expect(verify.stdout).toMatch(
        /verified 28 window\(s\) × 1 stream\(s\) \(accounts\) of job nightly, 2024-02-01\.\.2024-02-28: no gaps/,
      );
      // the directory's count too, over more windows than it reads whole: what it cannot settle, it says
      expect(verify.code, verify.stderr).toBe(6);
      expect(verify.stderr).toMatch(
        /^loyalty-etl: verify: cannot prove the customer directory 2024-02-01\.\.2024-02-28 complete, because the export counts 1 more records than the warehouse saw customers, in more than 20 windows/m,
      );
    } finally {
      inflate = false;
    }
  });
});
