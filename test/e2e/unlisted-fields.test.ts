import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type Middleware } from '../../src/emulator/index.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';
const FROM = '2024-05-01';
const TO = '2024-05-04';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'];

/**
 * A service that adds members the spec does not list, at every level the normalizer reads: an account export
 * row, a survey listing element and its answers, a posting, the loyalty answer with its tier, wallets and expiries,
 * a voucher.
 */
const addsMembers: Middleware = async (request, next) => {
  const response = await next(request);
  if (response.status !== 200) return response;
  let text = '';
  if (typeof response.body === 'string') text = response.body;
  else for await (const chunk of response.body) text += chunk;
  const body = JSON.parse(text) as Record<string, unknown>;
  const each = (list: unknown, add: (item: Record<string, unknown>) => void) => {
    if (Array.isArray(list)) for (const item of list) if (item && typeof item === 'object') add(item as Record<string, unknown>);
  };
  if (request.path === '/business-data/accounts') each(body.data, (r) => (r.segment = { code: 'S1', since: '2024-01-01' }));
  if (request.path === '/business-data/surveys')
    each(body.data, (e) => {
      e.channel = 'kiosk';
      each(e.answers, (a) => (a.mood = 4));
    });
  if (request.path === '/accounts/loyalty/postings') each(body.data, (p) => (p.channel = 'pos'));
  if (request.path === '/accounts' && body.loyalty && typeof body.loyalty === 'object') {
    const l = body.loyalty as Record<string, unknown>;
    l.memberTag = 'vip';
    if (l.tier && typeof l.tier === 'object') (l.tier as Record<string, unknown>).colour = 'gold';
    each(l.wallets, (w) => (w.bucket = 'main'));
    each(l.balanceDetails, (d) => (d.source = 'earn'));
  }
  if (request.path === '/accounts/vouchers/get') each(body, (v) => (v.campaign = "spring's"));
  return { ...response, body: JSON.stringify(body) };
};

describe.each(testDestinations)('fields the spec does not list, on $name', (target) => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 5, accounts: 25, startDate: FROM, endDate: TO, timezone: TZ, port: 0, hooks: { middleware: [addsMembers] } });
  });
  afterAll(async () => emulator.close());

  it('are kept on every row in _unlisted, registered once with their counts, and said once in the summary and by status', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config, streams: STREAMS, pageSize: 20 });
    const first = await runCli(['backfill', '--config', file, '--from', FROM, '--to', TO]);
    expect(first.code, first.stderr).toBe(0);
    const said = first.stdout.split('\n').filter((l) => l.startsWith('new field '));
    expect(said.map((l) => l.replace(/ first seen .*$/, '')).sort()).toEqual(
      [
        'new field answers[].mood on survey answer',
        'new field balanceDetails[].source on loyalty',
        'new field campaign on voucher',
        'new field channel on posting',
        'new field channel on survey answer',
        'new field memberTag on loyalty',
        'new field segment on account',
        'new field tier.colour on loyalty',
        'new field wallets[].bucket on loyalty',
      ].sort(),
    );
    expect(first.stderr).toMatch(/new field segment on account first seen in run/);

    const held = await withWarehouse(config, async (conn) => {
      const one = async (sql: string) => (await conn.all<Record<string, unknown>>(sql))[0]!;
      const n = async (table: string) => Number((await one(`SELECT COUNT(*) AS n FROM ${table}`)).n);
      return {
        registry: await conn.all<{ record_type: string; field_path: string; table_name: string; records: unknown }>(
          `SELECT record_type, field_path, table_name, records FROM _etl_unlisted_fields ORDER BY record_type, field_path`,
        ),
        rows: { accounts: await n('accounts'), postings: await n('loyalty_postings'), wallets: await n('loyalty_wallets'), vouchers: await n('vouchers') },
        // what an analyst writes: the member by its path, in either warehouse
        segments: await one(`SELECT COUNT(*) AS n, MIN(_unlisted->'segment'->>'code') AS code FROM accounts WHERE _unlisted IS NOT NULL`),
        colours: await one(`SELECT MIN(_unlisted->>'tier.colour') AS colour, COUNT(*) AS n FROM loyalty_status WHERE _unlisted->>'memberTag' = 'vip'`),
        campaign: await one(`SELECT MIN(_unlisted->>'campaign') AS c FROM vouchers`),
        mood: await one(`SELECT MIN(_unlisted->>'answers[].mood') AS m, MIN(_unlisted->>'channel') AS c FROM survey_responses`),
        noneOnChildren: await one(`SELECT COUNT(*) AS n FROM loyalty_postings WHERE _unlisted IS NULL`),
      };
    });
    expect(held.rows.accounts).toBeGreaterThan(0);
    expect(Number(held.segments.n)).toBe(held.rows.accounts);
    expect(held.segments.code).toBe('S1');
    expect(held.colours.colour).toBe('gold');
    expect(held.campaign.c).toBe("spring's");
    expect(String(held.mood.m)).toBe('4');
    expect(held.mood.c).toBe('kiosk');
    expect(Number(held.noneOnChildren.n)).toBe(0);
    const registered = new Map(held.registry.map((r) => [`${r.record_type} ${r.field_path}`, { table: r.table_name, records: Number(r.records) }]));
    expect(registered.size).toBe(9);
    expect(registered.get('posting channel')).toEqual({ table: 'loyalty_postings', records: held.rows.postings });
    expect(registered.get('loyalty wallets[].bucket')).toEqual({ table: 'loyalty_wallets', records: held.rows.wallets });
    expect(registered.get('voucher campaign')).toEqual({ table: 'vouchers', records: held.rows.vouchers });

    // loading the same days again: the fields are known, nothing is said as new, their last sighting moves on
    const again = await runCli(['backfill', '--config', file, '--from', TO, '--to', TO, '--stream', 'accounts']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toMatch(/new field/);
    const status = await runCli(['status', '--config', file]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/fields the spec does not list: 9/);
    const page = join(testTempDir('report-'), 'status.html');
    const report = await runCli(['report', '--config', file, '--output', page]);
    expect(report.code, report.stderr).toBe(0);
    expect(readFileSync(page, 'utf8')).toMatch(/<tr><td>tier\.colour<\/td><td>loyalty<\/td><td>loyalty_status\._unlisted<\/td>/);
    expect(status.stdout).toMatch(/\nsegment\s+account\s+accounts\._unlisted\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d+\n/);
  });
});
