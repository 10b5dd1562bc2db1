import { describe, expect, it } from 'vitest';
import { openDestination } from '../../src/load/open-destination.js';
import { duckdbTestDestination } from '../helpers/destinations.js';

async function memoryLimitOf(memoryLimit: string | undefined): Promise<string> {
  const { config } = await duckdbTestDestination.fresh();
  const destination = await openDestination({ ...config, ...(memoryLimit ? { memory_limit: memoryLimit } : {}) } as typeof config);
  try {
    return await destination.withConnection(async (conn) => (await conn.all<{ m: string }>(`SELECT current_setting('memory_limit') AS m`))[0]!.m);
  } finally {
    await destination.close();
  }
}

describe('DuckDB memory limit', () => {
  it("is 128 MB unless destination.memory_limit says otherwise, never DuckDB's default of most of the machine", async () => {
    // DuckDB shows the limit in its own units (MiB)
    expect(await memoryLimitOf(undefined)).toMatch(/^12[0-8](\.\d+)? MiB$/);
    expect(await memoryLimitOf('1GiB')).toMatch(/^1(\.0)? GiB$|^1024(\.0)? MiB$/);
  });
});
