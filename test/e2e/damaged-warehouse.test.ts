import { openSync, writeSync, closeSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorJobs, runCli, type CliResult } from '../helpers/cli.js';
import { duckdbTestDestination, testDestinations } from '../helpers/destinations.js';

const TZ = 'Europe/Athens';
const START = '2024-02-01';
const END = '2024-02-10';
const ENV = { LOYALTY_PII_SALT: 'salt-for-tests' };

/** DuckDB's file: a 4 KiB main header and two 4 KiB database headers, then blocks of 256 KiB. */
const BLOCKS_FROM = 3 * 4096;
const BLOCK_SIZE = 256 * 1024;

function expectOneLine(result: CliResult): string {
  expect(result.stderr).not.toMatch(/^\s+at |^Error: /m);
  const lines = result.stderr.trim().split('\n');
  expect(
    lines.filter((l) => l.startsWith('loyalty-etl:')),
    result.stderr,
  ).toHaveLength(1);
  return lines.at(-1)!;
}

/** Overwrites bytes inside a block that holds `table`'s column data, as a failing disk would. */
async function damageTable(file: string, table: string): Promise<void> {
  const instance = await DuckDBInstance.create(file);
  let block: number;
  try {
    const conn = await instance.connect();
    const rows = await (
      await conn.run(
        `SELECT block_id FROM pragma_storage_info('${table}') WHERE block_id >= 0 ORDER BY block_id DESC LIMIT 1`,
      )
    ).getRows();
    block = Number(rows[0]![0]);
    conn.closeSync();
  } finally {
    instance.closeSync();
  }
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(512, 0xa5), 0, 512, BLOCKS_FROM + block * BLOCK_SIZE + 1024);
  } finally {
    closeSync(fd);
  }
}

describe('a DuckDB warehouse with a damaged block', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 4, accounts: 120, startDate: START, endDate: END, timezone: TZ });
  });
  afterAll(() => emulator.close());

  it('status, verify, run and publish say the warehouse is damaged and that running again will not mend it: exit 10', async () => {
    const { config, warehouse } = await duckdbTestDestination.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: ['accounts', 'surveys', 'loyalty_postings'],
      lookbackDays: 3,
    });
    const first = await runCli(['run', '--config', file, '--until', END], ENV);
    expect(first.code, first.stderr).toBe(0);
    await damageTable(warehouse, 'loyalty_postings');

    for (const args of [['status'], ['verify', '--from', START, '--to', END], ['run', '--until', END], ['publish']]) {
      const result = await runCli([...args, '--config', file], ENV);
      const line = expectOneLine(result);
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(10);
      expect(line).toMatch(
        /^loyalty-etl: the warehouse is damaged and cannot be read \(Corrupt database file: .*\); this is not transient/,
      );
    }
  }, 120_000);
});

describe.each(testDestinations)('a window that fails the same way night after night, on $name', (target) => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 4, accounts: 30, startDate: START, endDate: END, timezone: TZ });
  });
  afterAll(() => emulator.close());

  it('the second night says the failure is not transient', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: { ...config, publish_path: false } as typeof config,
      streams: ['accounts'],
    });
    // every answer a 1006 error body: the service refuses the window's request the same way each night
    emulator.faults.set({ errorBodyRate: 1 });
    const nights: string[] = [];
    for (let night = 1; night <= 2; night++) {
      const result = await runCli(['run', '--config', file, '--until', START], ENV);
      expect(result.code, result.stderr).toBe(1);
      nights.push(expectOneLine(result));
    }
    emulator.faults.set({});
    expect(nights[0]).not.toMatch(/not transient/);
    expect(nights[1]).toMatch(/; it failed with the same error in the run before: not transient/);
  }, 120_000);
});
