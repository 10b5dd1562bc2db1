import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { openDestination } from '../../src/load/warehouses.js';
import { accountCustomFieldsTable, accountsTable } from '../../src/streams/accounts.js';
import { account, loadAccounts } from '../helpers/account-spans.js';
import { duckdbTestDestination, testDestinations } from '../helpers/destinations.js';

/** A fresh DuckDB warehouse opened with the jobs file's destination `settings`. */
async function openFresh(settings: object = {}) {
  const { config } = await duckdbTestDestination.fresh();
  return openDestination({ ...config, ...settings } as typeof config);
}

/** DuckDB's setting `name`, as it shows it, in a fresh warehouse opened with the jobs file's `settings`. */
async function settingOf(name: string, settings: object = {}): Promise<string> {
  const destination = await openFresh(settings);
  try {
    return await destination.withConnection(async (conn) =>
      String((await conn.all<{ value: unknown }>(`SELECT current_setting($1) AS value`, [name]))[0]!.value),
    );
  } finally {
    await destination.close();
  }
}

describe('DuckDB memory limit', () => {
  it("is 256 MB unless destination.memory_limit says otherwise, never DuckDB's default of most of the machine", async () => {
    // DuckDB shows the limit in its own units (MiB)
    expect(await settingOf('memory_limit')).toMatch(/^2(4\d|5[0-6])(\.\d+)? MiB$/);
    expect(await settingOf('memory_limit', { memory_limit: '1GiB' })).toMatch(/^1(\.0)? GiB$|^1024(\.0)? MiB$/);
  });

  it('checkpoints at 16 MB of log unless destination.checkpoint_threshold says otherwise', async () => {
    // DuckDB shows it in MiB: 1GB is 953.6 MiB
    expect(await settingOf('checkpoint_threshold')).toMatch(/^16(\.0)? MiB$/);
    expect(await settingOf('checkpoint_threshold', { checkpoint_threshold: '1GB' })).toMatch(/^953\.\d MiB$/);
  });

  it("runs on the machine's cores but one unless destination.threads says otherwise", async () => {
    // DuckDB's own default is every core: one is left for the pipeline's own thread
    const coresButOne = Math.max(1, availableParallelism() - 1);
    expect(Number(await settingOf('threads'))).toBe(coresButOne);
    // a count other than the default, so that the setting shows on any machine
    expect(Number(await settingOf('threads', { threads: coresButOne + 2 }))).toBe(coresButOne + 2);
  });

  it('a span that needs more fails with what to change, and leaves nothing behind', async () => {
    // enough to open the warehouse (its catalog, with a comment on every column, takes some 4 MB), far too little for the span
    const destination = await openFresh({ memory_limit: '8MB' });
    try {
      const many = Array.from({ length: 40_000 }, (_, i) => ({
        row: account(`C${String(i).padStart(7, '0')}`, `city ${'x'.repeat(200)} ${i}`),
        fields: { tier: `t${i}`, store: `s${i}` },
      }));
      await expect(loadAccounts(destination, '2024-03-01', many)).rejects.toThrow(
        /(Out of Memory Error|could not allocate|failed to allocate).* — raise destination\.memory_limit in the jobs file$/,
      );
      const left = await destination.withConnection(async (conn) =>
        conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM accounts`),
      );
      expect(Number(left[0]!.n)).toBe(0);
    } finally {
      await destination.close();
    }
  });
});

describe.each(testDestinations)('closing a $name warehouse', (target) => {
  it('gives back a span still open (its rows staged, never committed) instead of waiting on it', async () => {
    const { config } = await target.fresh();
    const destination = await openDestination(config);
    const span = await destination.openSpan({
      job: 'j',
      stream: 'accounts',
      runId: 'r',
      windows: [{ start: '2024-01-01', end: '2024-01-01' }],
      tables: [accountsTable, accountCustomFieldsTable],
    });
    await span.append('accounts', [{ seq: 1, windowStart: '2024-01-01', row: account('C1', 'Athens') }]);
    await destination.close();
    const again = await openDestination(config);
    try {
      const [row] = await again.withConnection((conn) =>
        conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM accounts`),
      );
      expect(Number(row!.n)).toBe(0);
    } finally {
      await again.close();
    }
  }, 15_000);
});
