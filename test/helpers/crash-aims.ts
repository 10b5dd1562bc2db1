/** Ways to aim a SIGKILL at a chosen phase of a CLI process's work, rather than at a random instant. */
import { existsSync, statSync } from 'node:fs';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import type { startCli } from './cli.js';
import { withWarehouse } from './warehouse-reader.js';

/** A CLI process a test means to kill. */
export type Victim = ReturnType<typeof startCli>;

/** A small deterministic generator, so a failing trial can be replayed from its seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Resolves when `test` holds, checked every `everyMs` while the victim lives; never once it has ended. */
export function untilSeen(victim: Victim, test: () => boolean, everyMs = 2): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!test()) return;
      clearInterval(timer);
      resolve();
    }, everyMs);
    void victim.done.then(() => clearInterval(timer));
  });
}

/** How many windows the process has logged as loaded (committed). */
export const windowsLoaded = (victim: Victim) => (victim.output().match(/"window loaded"/g) ?? []).length;

/** The size of a file, 0 while it does not exist. */
export function sizeOf(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/**
 * Resolves once the backfill's commit of a span is stopped inside its transaction: with the span's rows merged and
 * its windows recorded done, the commit reads the watermark, which a lock taken here holds off until the process
 * is gone. The lock is taken once the first span is in (the ledger's tables exist from then on).
 */
export function heldInCommitOnPostgres(victim: Victim, config: DestinationSettings): Promise<void> {
  return new Promise((held, failed) => {
    void untilSeen(victim, () => windowsLoaded(victim) > 0).then(() =>
      withWarehouse(config, (conn) =>
        conn.transaction(async () => {
          await conn.run('LOCK TABLE _etl_watermarks IN ACCESS EXCLUSIVE MODE');
          const giveUp = Date.now() + 30_000;
          for (;;) {
            // a commit that has written its windows into the ledger (a row lock on _etl_windows) and waits for the watermark
            const [waiting] = await conn.all<{ n: string | number }>(
              `SELECT COUNT(*) AS n FROM pg_locks waiting
                WHERE waiting.relation = CAST('_etl_watermarks' AS regclass) AND NOT waiting.granted
                  AND EXISTS (SELECT 1 FROM pg_locks held WHERE held.pid = waiting.pid AND held.granted
                                 AND held.relation = CAST('_etl_windows' AS regclass) AND held.mode = 'RowExclusiveLock')`,
            );
            if (Number(waiting!.n) > 0) break;
            if (victim.child.exitCode !== null) return;
            if (Date.now() > giveUp) {
              const sessions = await conn.all(
                `SELECT state, wait_event_type, wait_event, LEFT(query, 120) AS query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
              );
              throw new Error(`no commit came to wait at the watermark: ${JSON.stringify(sessions)}`);
            }
            await new Promise((r) => setTimeout(r, 5));
          }
          held();
          await victim.done;
        }),
      ).catch(failed),
    );
  });
}
