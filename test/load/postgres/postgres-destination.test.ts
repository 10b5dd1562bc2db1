import { readdirSync } from 'node:fs';
import { SQL_DIR } from '../../../src/load/warehouse/migrate.js';
import fc from 'fast-check';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DestinationSettings } from '../../../src/plan/job-plan.js';
import type { Destination } from '../../../src/load/destination.js';
import { commitWindows } from '../../../src/pipeline/load-span.js';
import type { Row } from '../../../src/load/table-spec.js';
import { openDestination } from '../../../src/load/warehouses.js';
import { accountCustomFieldsTable, accountsTable } from '../../../src/streams/accounts.js';
import { account, loadAccounts } from '../../helpers/account-spans.js';
import { postgresTestDestination } from '../../helpers/destinations.js';

/** Values that mean something to COPY text, to SQL or to a terminal; all must come back exactly. */
const HOSTILE_VALUES = [
  '',
  ' ',
  ' padded ',
  "it's",
  "''",
  '"quoted"',
  'back\\slash',
  '\\',
  '\\N',
  '\\\\N',
  'NULL',
  '\\.',
  '\\.\n',
  'tab\there',
  '\t',
  'new\nline',
  'cr\rhere',
  '\r\n',
  'ends with a backslash\\',
  '\\t is not a tab',
  '$1 $$ :name ?',
  "'); DROP TABLE accounts; --",
  '\b\f\v\u0001\u001b\u007f',
  'ünï ⭐ 日本語 مرحبا 😀 e\u0301 \u200d \ufeff',
  'x\t\\\n\r"\''.repeat(1_500),
  'v'.repeat(10_000),
];

/** Pivot keys that must each get their own column, quoted everywhere, and map back exactly. */
const HOSTILE_KEYS = [
  'tab\tkey',
  'new\nline key',
  'cr\rkey',
  'back\\slash key',
  '\\N',
  '\\.',
  'NULL',
  '"; DROP TABLE accounts; --',
  "Robert'); DROP TABLE accounts;--",
  'a"b""c',
  '日本語フィールド',
  '😀',
  '',
  ' ',
  'k'.repeat(500),
];

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe('PostgreSQL destination', () => {
  let config: Extract<DestinationSettings, { type: 'postgres' }>;
  let destination: Destination;
  beforeEach(async () => {
    config = (await postgresTestDestination.fresh()).config as typeof config;
    destination = await openDestination(config);
  });
  afterEach(async () => destination.close());

  it('round-trips hostile values and hostile pivot keys exactly through COPY and the merge', async () => {
    const fields = Object.fromEntries(HOSTILE_KEYS.map((k, i) => [k, HOSTILE_VALUES[i % HOSTILE_VALUES.length]!]));
    const accounts = HOSTILE_VALUES.map((v, i) => {
      const row: Row = { ...account(`C${i}\t\\${v.slice(0, 20)}`, v), first_name: v, last_name: null };
      return { row, fields: i === 0 ? fields : { [HOSTILE_KEYS[i % HOSTILE_KEYS.length]!]: v } };
    });
    await loadAccounts(destination, '2024-01-01', accounts);

    await destination.withConnection(async (conn) => {
      const map = await conn.all<{ column_name: string; source_key: string }>(
        'SELECT column_name, source_key FROM _etl_columns WHERE table_name = $1',
        ['accounts'],
      );
      expect(map.map((m) => m.source_key).sort()).toEqual([...HOSTILE_KEYS].sort());
      expect(new Set(map.map((m) => m.column_name)).size).toBe(HOSTILE_KEYS.length);
      const rows = await conn.all<Record<string, string | null>>('SELECT * FROM accounts');
      expect(rows).toHaveLength(accounts.length);
      const byId = new Map(rows.map((r) => [r.customer_id, r]));
      for (const a of accounts) {
        const row = byId.get(a.row.customer_id as string);
        expect(row?.city).toBe(a.row.city);
        expect(row?.first_name).toBe(a.row.first_name);
        expect(row?.last_name).toBeNull();
        for (const m of map) expect(row?.[m.column_name]).toBe(a.fields[m.source_key] ?? null);
      }
      const long = await conn.all<{ customer_id: string; field_name: string; value: string }>(
        'SELECT customer_id, field_name, value FROM account_custom_fields',
      );
      const expected = accounts.flatMap((a) =>
        Object.entries(a.fields).map(([field_name, value]) => ({ customer_id: a.row.customer_id, field_name, value })),
      );
      const order = (x: { customer_id: unknown; field_name: string }) =>
        `${String(x.customer_id)}\u0001${x.field_name}`;
      expect(long.sort((a, b) => (order(a) < order(b) ? -1 : 1))).toEqual(
        expected.sort((a, b) => (order(a) < order(b) ? -1 : 1)),
      );
    });
  });

  it('round-trips hostile rejects and typed values', async () => {
    const span = await destination.openSpan({
      job: 'j',
      stream: 'accounts',
      runId: 'r1',
      windows: [{ start: '2024-01-01', end: '2024-01-01' }],
      tables: [accountsTable, accountCustomFieldsTable],
    });
    await span.append('accounts', [
      {
        seq: 1,
        windowStart: '2024-01-01',
        row: {
          ...account('C1', null),
          birthdate: '1999-12-31',
          profile_set_at: '2024-02-29T23:59:59.123Z',
          customer_since: '2020-01-01T00:00:00+03:00',
        },
      },
    ]);
    await span.reject(
      HOSTILE_VALUES.map((v) => ({ windowStart: '2024-01-01', payload: JSON.stringify({ v }), error: v })),
    );
    await commitWindows(
      span,
      { job: 'j', stream: 'accounts', runId: 'r1', firstDay: '2024-01-01' },
      [{ start: '2024-01-01', end: '2024-01-01' }],
      new Map([['2024-01-01', 1 + HOSTILE_VALUES.length]]),
      1,
    );
    await destination.withConnection(async (conn) => {
      const rejects = await conn.all<{ payload: string; error: string }>('SELECT payload, error FROM _etl_rejects');
      expect(rejects.map((r) => r.error).sort()).toEqual([...HOSTILE_VALUES].sort());
      for (const r of rejects) expect(JSON.parse(r.payload)).toEqual({ v: r.error });
      expect(await conn.all('SELECT birthdate, profile_set_at, customer_since, member_since FROM accounts')).toEqual([
        {
          birthdate: '1999-12-31',
          profile_set_at: '2024-02-29 23:59:59.123+00',
          customer_since: '2019-12-31 21:00:00+00',
          member_since: null,
        },
      ]);
      expect(
        await conn.all('SELECT window_start, rows_extracted, rows_loaded, rows_rejected FROM _etl_windows'),
      ).toEqual([
        {
          window_start: '2024-01-01',
          rows_extracted: String(1 + HOSTILE_VALUES.length),
          rows_loaded: '1',
          rows_rejected: String(HOSTILE_VALUES.length),
        },
      ]);
    });
  });

  it('round-trips arbitrary text as values and as pivot keys', async () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\u0000'));
    const keys = [...new Set(fc.sample(text, { numRuns: 100, seed: 7 }))];
    const values = fc.sample(text, { numRuns: keys.length, seed: 11 });
    const fields = Object.fromEntries(keys.map((k, i) => [k, values[i]!]));
    await loadAccounts(destination, '2024-01-01', [{ row: account('C1', values[0]!), fields }]);
    await destination.withConnection(async (conn) => {
      const long = await conn.all<{ field_name: string; value: string }>(
        'SELECT field_name, value FROM account_custom_fields',
      );
      expect(Object.fromEntries(long.map((r) => [r.field_name, r.value]))).toEqual(fields);
      const map = await conn.all<{ column_name: string; source_key: string }>(
        'SELECT column_name, source_key FROM _etl_columns',
      );
      const [row] = await conn.all<Record<string, string>>('SELECT * FROM accounts');
      for (const m of map) expect(row![m.column_name]).toBe(fields[m.source_key]);
    });
  });

  it('makes commits of one stream take turns on an advisory lock, while staging goes on', async () => {
    const other = await openDestination(config);
    try {
      await withClient(config.url, async (holder) => {
        await holder.query('BEGIN');
        await holder.query(`SELECT pg_advisory_xact_lock(hashtext('public.accounts'))`);
        const committing = loadAccounts(destination, '2024-01-01', [
          { row: account('C1', 'first'), fields: { 'shared key': '1' } },
        ]);
        // a commit of another span of the same stream waits too; its staging does not
        const second = loadAccounts(
          other,
          '2024-01-02',
          [{ row: account('C1', 'second'), fields: { 'shared key': '2' } }],
          'run-b',
        );
        let waiting = 0;
        for (let i = 0; i < 200 && waiting < 2; i++) {
          await new Promise((r) => setTimeout(r, 25));
          const { rows } = await holder.query<{ n: string }>(
            `SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
          );
          waiting = Number(rows[0]!.n);
        }
        expect(waiting).toBe(2);
        await holder.query('COMMIT');
        await Promise.all([committing, second]);
      });
      await destination.withConnection(async (conn) => {
        expect(await conn.all('SELECT city, cf_shared_key FROM accounts')).toEqual([
          { city: 'second', cf_shared_key: '2' },
        ]);
        expect(await conn.all('SELECT column_name, source_key FROM _etl_columns')).toEqual([
          { column_name: 'cf_shared_key', source_key: 'shared key' },
        ]);
      });
    } finally {
      await other.close();
    }
  });

  it('commits spans of one stream from two processes at once without losing either', async () => {
    const others = await Promise.all([openDestination(config), openDestination(config), openDestination(config)]);
    try {
      // every span adds the same new pivot columns: without the lock two of them would both try to add them
      await Promise.all(
        [destination, ...others].map((d, i) =>
          loadAccounts(
            d,
            `2024-01-0${i + 1}`,
            [{ row: account(`C${i}`, `city ${i}`), fields: { 'new a': `a${i}`, 'new b': `b${i}` } }],
            `run-${i}`,
          ),
        ),
      );
      await destination.withConnection(async (conn) => {
        expect(await conn.all('SELECT customer_id, cf_new_a, cf_new_b FROM accounts ORDER BY customer_id')).toEqual(
          [0, 1, 2, 3].map((i) => ({ customer_id: `C${i}`, cf_new_a: `a${i}`, cf_new_b: `b${i}` })),
        );
        expect(await conn.all('SELECT COUNT(*) AS n FROM _etl_windows')).toEqual([{ n: '4' }]);
        expect(await conn.all('SELECT complete_through FROM _etl_watermarks')).toEqual([
          { complete_through: '2024-01-04' },
        ]);
      });
    } finally {
      await Promise.all(others.map((d) => d.close()));
    }
  });

  it('starts over cleanly after reset, and leaves no staging behind', async () => {
    const span = await destination.openSpan({
      job: 'j',
      stream: 'accounts',
      runId: 'r',
      windows: [{ start: '2024-01-01', end: '2024-01-01' }],
      tables: [accountsTable, accountCustomFieldsTable],
    });
    await span.append('accounts', [{ seq: 1, windowStart: '2024-01-01', row: account('GONE', 'x') }]);
    await span.reject([{ windowStart: '2024-01-01', payload: '{}', error: 'gone' }]);
    await span.reset();
    await span.append('accounts', [{ seq: 2, windowStart: '2024-01-01', row: account('KEPT', 'y') }]);
    await commitWindows(
      span,
      { job: 'j', stream: 'accounts', runId: 'r', firstDay: '2024-01-01' },
      [{ start: '2024-01-01', end: '2024-01-01' }],
      new Map([['2024-01-01', 1]]),
      1,
    );
    await destination.withConnection(async (conn) => {
      expect(await conn.all('SELECT customer_id FROM accounts')).toEqual([{ customer_id: 'KEPT' }]);
      expect(await conn.all('SELECT * FROM _etl_rejects')).toEqual([]);
      expect(await conn.all(`SELECT relname FROM pg_class WHERE relname LIKE '\\_stg\\_%'`)).toEqual([]);
    });
  });

  it('loads into a schema of its own, whatever its name', async () => {
    const odd = await openDestination({ ...config, schema: 'Loyalty "ETL"' });
    try {
      await loadAccounts(odd, '2024-01-01', [{ row: account('C1', 'Athens'), fields: { tier: 'gold' } }]);
      await odd.withConnection(async (conn) => {
        expect(await conn.all(`SELECT city, cf_tier FROM ${conn.schemaSql}.accounts`)).toEqual([
          { city: 'Athens', cf_tier: 'gold' },
        ]);
      });
      await destination.withConnection(async (conn) =>
        expect(await conn.all('SELECT * FROM public.accounts')).toEqual([]),
      );
    } finally {
      await odd.close();
    }
  });

  it('lets several processes open (and migrate) a new schema at once', async () => {
    const opened = await Promise.all([1, 2, 3, 4].map(() => openDestination({ ...config, schema: 'parallel' })));
    try {
      await opened[0]!.withConnection(async (conn) => {
        const files = readdirSync(`${SQL_DIR}postgres`)
          .filter((f) => f.endsWith('.sql'))
          .sort();
        expect(await conn.all(`SELECT version FROM ${conn.schemaSql}._etl_migrations ORDER BY version`)).toEqual(
          files.map((f) => ({ version: f.replace(/\.sql$/, '') })),
        );
      });
    } finally {
      await Promise.all(opened.map((d) => d.close()));
    }
  });

  it('never shows the password, in descriptions or in connection errors', async () => {
    const secret = 'S3cret-p@ss';
    const url = new URL(config.url);
    url.password = secret;
    const withPassword = await openDestination({ ...config, url: url.toString() });
    try {
      expect(withPassword.describe()).not.toContain(secret);
      expect(withPassword.describe()).not.toContain(encodeURIComponent(secret));
    } finally {
      await withPassword.close();
    }
    const closedPort = `postgres://etl:${encodeURIComponent(secret)}@127.0.0.1:1/nowhere?password=${encodeURIComponent(secret)}`;
    const error = await openDestination({ type: 'postgres', url: closedPort, schema: 'public' }).then(
      () => new Error('opened a destination on a closed port'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toMatch(/cannot connect to the warehouse postgres:\/\/etl@127\.0\.0\.1:1\/nowhere/);
    expect(`${error.message} ${error.stack} ${JSON.stringify(error)}`).not.toMatch(/S3cret|S3cret-p%40ss/);
  });
});
