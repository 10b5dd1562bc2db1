import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UNLISTED_FIELDS, unlistedMembers, type Middleware } from '../../src/emulator/index.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-05-01';
const TO = '2024-05-04';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'];

/**
 * Members the spec does not list at the levels the `unlistedFields` reading leaves alone: a survey listing element
 * beside its answers, and the loyalty answer's tier, wallets and expiries. The reading adds them to every record.
 */
const addsNestedMembers: Middleware = async (request, next) => {
  const response = await next(request);
  if (response.status !== 200 || (request.path !== '/business-data/surveys' && request.path !== '/accounts'))
    return response;
  let text = '';
  if (typeof response.body === 'string') text = response.body;
  else for await (const chunk of response.body) text += chunk;
  const body = JSON.parse(text) as Record<string, unknown>;
  const each = (list: unknown, add: (item: Record<string, unknown>) => void) => {
    if (Array.isArray(list))
      for (const item of list) if (item && typeof item === 'object') add(item as Record<string, unknown>);
  };
  if (request.path === '/business-data/surveys') each(body.data, (e) => (e.origin = 'kiosk'));
  if (request.path === '/accounts' && body.loyalty && typeof body.loyalty === 'object') {
    const l = body.loyalty as Record<string, unknown>;
    if (l.tier && typeof l.tier === 'object') (l.tier as Record<string, unknown>).colour = "gold's";
    each(l.wallets, (w) => (w.bucket = 'main'));
    each(l.balanceDetails, (d) => (d.source = { kind: 'earn' }));
  }
  return { ...response, body: JSON.stringify(body) };
};

describe.each(testDestinations)('fields the spec does not list, on $name', (target) => {
  const emulator = useEmulator({
    seed: 5,
    accounts: 25,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    port: 0,
    readings: { unlistedFields: true },
    hooks: { middleware: [addsNestedMembers] },
  });

  it('are kept on every row in _unlisted, registered once with their counts, and said once in the summary and by status', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: STREAMS,
      pageSize: 20,
    });
    const first = await runCli(['backfill', '--config', file, '--from', FROM, '--to', TO]);
    expect(first.code, first.stderr).toBe(0);
    const said = first.stdout.split('\n').filter((l) => l.startsWith('new field '));
    const expected = [
      ...Object.entries(UNLISTED_FIELDS).flatMap(([type, fields]) =>
        fields.map((f) => (type === 'surveyAnswer' ? `answers[].${f} on survey answer` : `${f} on ${type}`)),
      ),
      'origin on survey answer',
      'tier.colour on loyalty',
      'wallets[].bucket on loyalty',
      'balanceDetails[].source on loyalty',
    ].map((l) => `new field ${l}`);
    expect(said.map((l) => l.replace(/ first seen .*$/, '')).sort()).toEqual(expected.sort());
    expect(first.stderr).toMatch(/new field segment on account first seen in run/);

    const held = await withWarehouse(config, async (conn) => {
      const unlisted = async (sql: string) =>
        new Map(
          (await conn.all<{ k: string; u: string | null }>(sql)).map((r) => [
            r.k,
            r.u === null ? null : (JSON.parse(r.u) as unknown),
          ]),
        );
      return {
        registry: await conn.all<{ record_type: string; field_path: string; table_name: string; records: unknown }>(
          `SELECT record_type, field_path, table_name, records FROM _etl_unlisted_fields ORDER BY record_type, field_path`,
        ),
        // every version of an account the export served: a customer changed on two nights was served twice
        versions: Number((await conn.all<{ n: unknown }>(`SELECT COUNT(*) AS n FROM _etl_account_windows`))[0]!.n),
        accounts: await unlisted(`SELECT customer_id AS k, CAST(_unlisted AS VARCHAR) AS u FROM accounts`),
        status: await unlisted(`SELECT customer_id AS k, CAST(_unlisted AS VARCHAR) AS u FROM loyalty_status`),
        vouchers: await unlisted(`SELECT code AS k, CAST(_unlisted AS VARCHAR) AS u FROM vouchers`),
        wallets: await unlisted(
          `SELECT customer_id || ' ' || country_iso || ' ' || currency AS k, CAST(_unlisted AS VARCHAR) AS u FROM loyalty_wallets`,
        ),
        postings: await unlisted(`SELECT posting_id AS k, CAST(_unlisted AS VARCHAR) AS u FROM loyalty_postings`),
        // what an analyst writes: a member by its path, in either warehouse
        analyst: (
          await conn.all<Record<string, unknown>>(
            `SELECT MIN(s._unlisted->>'tier.colour') AS colour, MIN(r._unlisted->>'origin') AS origin, MIN(r._unlisted->>'answers[].channel') AS channel
               FROM loyalty_status s, survey_responses r`,
          )
        )[0]!,
      };
    });
    // exactly what the service sent, member by member, for every row
    expect(held.accounts.size).toBeGreaterThan(0);
    for (const [id, u] of held.accounts) expect(u, id).toEqual(unlistedMembers('account', id));
    expect(held.vouchers.size).toBeGreaterThan(0);
    for (const [code, u] of held.vouchers) expect(u, code).toEqual(unlistedMembers('voucher', code));
    expect(held.status.size).toBeGreaterThan(0);
    for (const [id, u] of held.status)
      expect(u, id).toEqual({ ...unlistedMembers('loyalty', id), 'tier.colour': "gold's" });
    for (const u of held.wallets.values()) expect(u).toEqual({ 'wallets[].bucket': 'main' });
    expect(held.postings.size).toBeGreaterThan(0);
    for (const u of held.postings.values()) expect(Object.keys(u as object).sort()).toEqual(['campaign', 'channel']);
    expect(held.analyst).toEqual({
      colour: "gold's",
      origin: 'kiosk',
      channel: expect.stringMatching(/^(kiosk|web|sms)$/),
    });
    const registered = new Map(
      held.registry.map((r) => [
        `${r.record_type} ${r.field_path}`,
        { table: r.table_name, records: Number(r.records) },
      ]),
    );
    expect(registered.size).toBe(expected.length);
    expect(registered.get('account segment')).toEqual({ table: 'accounts', records: held.versions });
    expect(registered.get('posting channel')).toEqual({ table: 'loyalty_postings', records: held.postings.size });
    expect(registered.get('loyalty wallets[].bucket')).toEqual({
      table: 'loyalty_wallets',
      records: held.wallets.size,
    });
    expect(registered.get('voucher campaign')).toEqual({ table: 'vouchers', records: held.vouchers.size });

    // loading the same days again: the fields are known, nothing is said as new, their last sighting moves on
    const again = await runCli(['backfill', '--config', file, '--from', TO, '--to', TO, '--stream', 'accounts']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toMatch(/new field/);
    const status = await runCli(['status', '--config', file]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`fields the spec does not list: ${expected.length}`);
    const page = join(testTempDir('report-'), 'status.html');
    const report = await runCli(['report', '--config', file, '--output', page]);
    expect(report.code, report.stderr).toBe(0);
    expect(readFileSync(page, 'utf8')).toMatch(
      /<tr><td>tier\.colour<\/td><td>loyalty<\/td><td>loyalty_status\._unlisted<\/td>/,
    );
    expect(status.stdout).toMatch(
      /\nsegment\s+account\s+accounts\._unlisted\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d+\n/,
    );
  });
});
