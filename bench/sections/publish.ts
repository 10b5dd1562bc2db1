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
 * (`memory_limit` 256MB); then under `personal_data: hash`, written whole, again with nothing changed, and after
 * small changes to one table (the copy started from the previous one, only the changed table written); once more by
 * DuckDB's `COPY FROM DATABASE` into a new file, the alternative the file copy was chosen against.
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
      await fillSyntheticWarehouse(path, COUNTS, { windowsInOrder: true });
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
        // under `hash` (the default): the copy written whole, then started from the previous one
        const policy = { personalData: 'hash' as const, key: 'a key of the bench' };
        const hashed = join(dir, 'warehouse.hashed.duckdb');
        const night = async (how: string, change: string[]) => {
          if (change.length)
            await warehouse.withConnection(async (conn) => {
              for (const statement of change) await conn.run(statement);
            });
          const cpu = process.cpuUsage();
          const copy = await warehouse.publishCopy(hashed, policy);
          const used = process.cpuUsage(cpu);
          const rewrite = copy.rewrite!;
          rows.push({
            how: `hash: ${how}`,
            seconds: round(copy.seconds),
            'writes held s': round(copy.heldSeconds),
            'CPU s': round((used.user + used.system) / 1e6),
            'fingerprint s': round(rewrite.fingerprintSeconds),
            'tables written': `${rewrite.written.length} of ${rewrite.tables} (${rewrite.how})`,
            'rows written': rewrite.rowsWritten,
            'warehouse MB': mb(statSync(path).size),
            'copy MB': mb(copy.bytes),
          });
          return copy;
        };
        const whole = await night('written whole (no copy before)', []);
        const unchanged = await night('nothing changed', []);
        const small = await night('one row of a small table changed (_etl_migrations)', [
          `UPDATE _etl_migrations SET applied_at = applied_at + INTERVAL 1 SECOND WHERE version = (SELECT MIN(version) FROM _etl_migrations)`,
        ]);
        const accounts = await night('one account changed (accounts written again)', [
          `UPDATE accounts SET city = 'Elsewhere' WHERE customer_id = (SELECT MIN(customer_id) FROM accounts)`,
        ]);
        const postings = await night('one posting changed (its window of loyalty_postings written again)', [
          `UPDATE loyalty_postings SET credit = COALESCE(credit, 0) + 1 WHERE rowid = (SELECT MIN(rowid) FROM loyalty_postings)`,
        ]);
        // a quiet night's shape: 2% of the customers changed (their rows move to the night's window, out of every
        // other), and a new day of postings
        const quiet = await night('a night: 2% of accounts changed, a new day of postings', [
          `UPDATE accounts SET city = 'Elsewhere', _window_start = DATE '2025-01-01' WHERE rowid % 50 = 0`,
          `INSERT INTO loyalty_postings SELECT * REPLACE (DATE '2025-01-01' AS _window_start) FROM loyalty_postings WHERE _window_start = (SELECT MIN(_window_start) FROM loyalty_postings)`,
        ]);
        checks.push({
          name: 'hash: a publish after a small change costs less than a third of a whole rewrite',
          passed: small.seconds < whole.seconds / 3,
          detail: `${round(small.seconds)} s against ${round(whole.seconds)} s (nothing changed: ${round(unchanged.seconds)} s; accounts: ${round(accounts.seconds)} s; postings: ${round(postings.seconds)} s; a night: ${round(quiet.seconds)} s)`,
        });

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
