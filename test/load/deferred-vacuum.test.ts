import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbSqlConnection } from '../../src/load/duckdb/duckdb-connection.js';
import { DeferredVacuum, tableRows, type TableRows } from '../../src/load/duckdb/deferred-vacuum.js';
import { duckdbTestDestination } from '../helpers/destinations.js';

const ROWS = 400_000;
const instances: DuckDBInstance[] = [];

/** A warehouse that checkpoints at every commit, as the commits of a backfill's spans do. */
async function open(path: string): Promise<DuckDbSqlConnection> {
  const instance = await DuckDBInstance.create(path, { checkpoint_threshold: '1KB' });
  instances.push(instance);
  return new DuckDbSqlConnection(await instance.connect(), 'main');
}

function close(): void {
  for (const instance of instances.splice(0)) instance.closeSync();
}

afterEach(close);

/** A table of ROWS ids, checkpointed: what earlier loads left. */
async function warehouseWithTable(): Promise<string> {
  const { warehouse } = await duckdbTestDestination.fresh();
  const conn = await open(warehouse);
  await conn.run(`CREATE TABLE t AS SELECT range AS id, 'value ' || range AS v FROM range(${ROWS})`);
  await conn.run('CHECKPOINT');
  close();
  return warehouse;
}

/**
 * One merge as a span commit does it, through `vacuum`: the rows of one id class (`id % 7`) of the first ROWS ids
 * are replaced by as many new ones, deleted from everywhere in the table.
 */
async function replaceClass(conn: DuckDbSqlConnection, vacuum: DeferredVacuum, k: number): Promise<TableRows> {
  await vacuum.commit(conn, 'main', ['t'], () =>
    conn.transaction(async () => {
      await conn.run(`DELETE FROM t WHERE id < ${ROWS} AND id % 7 = ${k}`);
      await conn.run(
        `INSERT INTO t SELECT ${ROWS} * ${k + 1} + range, 'new' FROM range(${ROWS}) WHERE range % 7 = ${k}`,
      );
    }),
  );
  return (await tableRows(conn, 'main', ['t']))[0]!;
}

async function content(conn: DuckDbSqlConnection): Promise<{ n: number; sum: number }> {
  const [row] = await conn.all<{ n: string; sum: string }>(`SELECT COUNT(*) AS n, SUM(id) AS sum FROM t`);
  return { n: Number(row!.n), sum: Number(row!.sum) };
}

function expectedContent(replaced: number): { n: number; sum: number } {
  let sum = 0;
  for (let id = 0; id < ROWS; id++) {
    const k = id % 7;
    sum += k < replaced ? ROWS * (k + 1) + id : id;
  }
  return { n: ROWS, sum };
}

describe('DuckDB compaction of deleted rows', () => {
  it('waits until the dead rows reach half the live ones, then one commit compacts them, and no row is lost', async () => {
    const conn = await open(await warehouseWithTable());
    const vacuum = await DeferredVacuum.install(conn);
    const seen: TableRows[] = [];
    for (let k = 0; k < 5; k++) seen.push(await replaceClass(conn, vacuum, k));
    const dead = seen.map((s) => s.dead);
    // four commits left their deleted rows in place: no checkpoint rewrote the table for them
    for (let i = 1; i < 4; i++) expect(dead[i]).toBeGreaterThan(dead[i - 1]! + 50_000);
    expect(dead[3]).toBeGreaterThanOrEqual(ROWS / 2);
    // the fifth found them due and compacted the table
    expect(dead[4]).toBeLessThan(ROWS / 4);
    expect(seen.every((s) => s.live === ROWS)).toBe(true);
    expect(await content(conn)).toEqual(expectedContent(5));
    // vacuum is off again for the commits that follow
    const [setting] = await conn.all<{ v: number | string }>(`SELECT current_setting('max_vacuum_tasks') AS v`);
    expect(Number(setting!.v)).toBe(0);
  });

  it('a process that commits once (a nightly run) compacts what earlier runs left', async () => {
    const warehouse = await warehouseWithTable();
    let conn = await open(warehouse);
    let vacuum = await DeferredVacuum.install(conn);
    for (let k = 0; k < 4; k++) await replaceClass(conn, vacuum, k);
    close();

    conn = await open(warehouse);
    const left = (await tableRows(conn, 'main', ['t']))[0]!;
    expect(left.dead).toBeGreaterThanOrEqual(ROWS / 2);
    vacuum = await DeferredVacuum.install(conn);
    const after = await replaceClass(conn, vacuum, 4);
    expect(after.dead).toBeLessThan(ROWS / 4);
    close();

    conn = await open(warehouse);
    expect(await content(conn)).toEqual(expectedContent(5));
  });
});
