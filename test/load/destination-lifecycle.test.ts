import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { openDestination } from '../../src/load/open-destination.js';
import { accountCustomFieldsTable, accountsTable } from '../../src/streams/accounts.js';
import { account, loadAccounts } from '../helpers/account-spans.js';
import { duckdbTestDestination, testDestinations } from '../helpers/destinations.js';

async function openWithLimit(memoryLimit: string | undefined) {
  const { config } = await duckdbTestDestination.fresh();
  return openDestination({ ...config, ...(memoryLimit ? { memory_limit: memoryLimit } : {}) } as typeof config);
}

async function memoryLimitOf(memoryLimit: string | undefined): Promise<string> {
  const destination = await openWithLimit(memoryLimit);
  try {
    return await destination.withConnection(async (conn) => (await conn.all<{ m: string }>(`SELECT current_setting('memory_limit') AS m`))[0]!.m);
  } finally {
    await destination.close();
  }
}

describe('DuckDB memory limit', () => {
  it("is 256 MB unless destination.memory_limit says otherwise, never DuckDB's default of most of the machine", async () => {
    // DuckDB shows the limit in its own units (MiB)
    expect(await memoryLimitOf(undefined)).toMatch(/^2(4\d|5[0-6])(\.\d+)? MiB$/);
    expect(await memoryLimitOf('1GiB')).toMatch(/^1(\.0)? GiB$|^1024(\.0)? MiB$/);
  });

  it('checkpoints at 16 MB of log unless destination.checkpoint_threshold says otherwise', async () => {
    const setting = async (extra: object) => {
      const { config } = await duckdbTestDestination.fresh();
      const destination = await openDestination({ ...config, ...extra } as typeof config);
      try {
        return await destination.withConnection(async (conn) => (await conn.all<{ t: string }>(`SELECT current_setting('checkpoint_threshold') AS t`))[0]!.t);
      } finally {
        await destination.close();
      }
    };
    // DuckDB shows it in MiB: 1GB is 953.6 MiB
    expect(await setting({})).toMatch(/^16(\.0)? MiB$/);
    expect(await setting({ checkpoint_threshold: '1GB' })).toMatch(/^953\.\d MiB$/);
  });

  it("runs on the machine's cores but one unless destination.threads says otherwise", async () => {
    const threads = async (extra: object) => {
      const { config } = await duckdbTestDestination.fresh();
      const destination = await openDestination({ ...config, ...extra } as typeof config);
      try {
        return await destination.withConnection(async (conn) => Number((await conn.all<{ t: unknown }>(`SELECT current_setting('threads') AS t`))[0]!.t));
      } finally {
        await destination.close();
      }
    };
    // DuckDB's own default is every core: one is left for the pipeline's own thread
    expect(await threads({})).toBe(Math.max(1, availableParallelism() - 1));
    expect(await threads({ threads: 3 })).toBe(3);
  });

  it('a span that needs more fails with what to change, and leaves nothing behind', async () => {
    const destination = await openWithLimit('4MB');
    try {
      const many = Array.from({ length: 40_000 }, (_, i) => ({ row: account(`C${String(i).padStart(7, '0')}`, `city ${'x'.repeat(200)} ${i}`), fields: { tier: `t${i}`, store: `s${i}` } }));
      await expect(loadAccounts(destination, '2024-03-01', many)).rejects.toThrow(/(Out of Memory Error|could not allocate|failed to allocate).* — raise destination\.memory_limit in the jobs file$/);
      const left = await destination.withConnection(async (conn) => conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM accounts`));
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
    const span = await destination.openSpan({ job: 'j', stream: 'accounts', runId: 'r', firstDay: '2024-01-01', windows: [{ start: '2024-01-01', end: '2024-01-01' }], tables: [accountsTable, accountCustomFieldsTable] });
    await span.append('accounts', [{ seq: 1, windowStart: '2024-01-01', row: account('C1', 'Athens') }]);
    await destination.close();
    const again = await openDestination(config);
    try {
      const [row] = await again.withConnection((conn) => conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM accounts`));
      expect(Number(row!.n)).toBe(0);
    } finally {
      await again.close();
    }
  }, 15_000);
});
