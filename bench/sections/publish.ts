import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDbDestination } from '../../src/load/duckdb/duckdb-destination.js';
import type { BenchCheck, BenchSection } from '../support/bench-section.js';
import { fillSyntheticWarehouse } from '../support/synthetic-warehouse.js';
import { unlessSmoke } from '../support/bench-mode.js';

/** The warehouse of the measurement (`BENCH_PUBLISH_SCALE=0.1` for a quick look). */
const SCALE = unlessSmoke(Number(process.env.BENCH_PUBLISH_SCALE ?? 1), 0.001);
const COUNTS = { accounts: Math.round(1_000_000 * SCALE), postings: Math.round(10_000_000 * SCALE) };
const PUBLISHES = unlessSmoke(3, 1);
/** A publish may hold the pipeline's writes this long at most (the checkpoint and the copy). */
const TARGET_SECONDS = 30;

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const round = (seconds: number) => Math.round(seconds * 100) / 100;

/**
 * What publishing the read-only copy for analysts costs (`load/duckdb/publish.ts`): a warehouse of 1M accounts and
 * 10M postings is made up in SQL, then published three times the way a run ends, with the pipeline's own settings
 * (`memory_limit` 256MB); once more by DuckDB's `COPY FROM DATABASE` into a new file, the alternative it was chosen
 * against.
 */
export const publish: BenchSection = {
  name: 'publish',
  title: `seconds and disk to publish the read-only copy of a DuckDB warehouse of ${COUNTS.accounts.toLocaleString('en-US')} accounts and ${COUNTS.postings.toLocaleString('en-US')} postings (target: writes held < ${TARGET_SECONDS} s)`,
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'loyalty-bench-publish-'));
    const rows: Array<Record<string, string | number>> = [];
    const checks: BenchCheck[] = [];
    try {
      const path = join(dir, 'warehouse.duckdb');
      const filling = performance.now();
      await fillSyntheticWarehouse(path, COUNTS);
      const warehouseBytes = statSync(path).size;
      process.stderr.write(
        `warehouse made up in ${round((performance.now() - filling) / 1000)} s: ${mb(warehouseBytes)} MB\n`,
      );
      const warehouse = await DuckDbDestination.open(path);
      try {
        const target = join(dir, 'warehouse.published.duckdb');
        for (let i = 1; i <= PUBLISHES; i++) {
          const copy = await warehouse.publishCopy(target, { personalData: 'keep' });
          rows.push({
            how: `publish ${i} (checkpoint, copy, fsync, open, rename)`,
            seconds: round(copy.seconds),
            'writes held s': round(copy.heldSeconds),
            'warehouse MB': mb(warehouseBytes),
            'copy MB': mb(copy.bytes),
          });
          checks.push({
            name: `publish ${i}: writes held under ${TARGET_SECONDS} s`,
            passed: copy.heldSeconds < TARGET_SECONDS,
            detail: `${round(copy.heldSeconds)} s of ${round(copy.seconds)} s`,
          });
        }
        const alternative = join(dir, 'copy-from-database.duckdb');
        const started = performance.now();
        await warehouse.withConnection(async (conn) => {
          await conn.run(`ATTACH '${alternative}' AS copy_target`);
          await conn.run('COPY FROM DATABASE warehouse TO copy_target');
          await conn.run('DETACH copy_target');
        });
        rows.push({
          how: 'COPY FROM DATABASE into a new file',
          seconds: round((performance.now() - started) / 1000),
          'writes held s': '(none: a snapshot)',
          'warehouse MB': mb(warehouseBytes),
          'copy MB': mb(statSync(alternative).size),
        });
      } finally {
        await warehouse.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      settings: { ...COUNTS, publishes: PUBLISHES },
      rows,
      checks,
      notes: [
        'while a publish runs, the disk holds the warehouse, the copy being written, and the previous copy (until its last reader closes it)',
      ],
    };
  },
};
