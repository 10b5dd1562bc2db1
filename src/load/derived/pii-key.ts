import { randomBytes } from 'node:crypto';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import type { Destination } from '../destination.js';
import { qualified } from '../warehouse/identifiers.js';

/** The table that keeps the key of a warehouse's hashes: the pipeline's alone (never copied, exported or shown). */
export const PII_KEY_TABLE = '_etl_pii_key';

const SLOT = 'personal_data';

/** What {@link settlePiiKey} found: the policy with its key, and whether `LOYALTY_PII_SALT` changed the kept key. */
export interface SettledPiiKey {
  policy: AnalystsPolicy;
  /** The salt of the environment differs from the one the warehouse's hashes were made with until now. */
  changed?: { previousOrigin: string; keptSince: string };
  /** The key was made now, for a warehouse that had none and no `LOYALTY_PII_SALT`. */
  generated?: boolean;
}

/**
 * Gives a `hash` policy its key, so that no setting is needed for it: the key of `LOYALTY_PII_SALT` when it is set
 * (kept, and a change from the key kept before said), else the key the warehouse keeps, else a random one made now and
 * kept. Every host and every run of one warehouse then hashes alike. Other policies need no key.
 */
export async function settlePiiKey(destination: Destination, policy: AnalystsPolicy): Promise<SettledPiiKey> {
  if (policy.personalData !== 'hash') return { policy };
  const table = qualified(destination.schema, PII_KEY_TABLE);
  return destination.ledgerTransaction(async (conn) => {
    const now = new Date().toISOString();
    const [kept] = await conn.all<{ key: string; origin: string; since: string }>(
      `SELECT key, origin, CAST(COALESCE(changed_at, created_at) AS VARCHAR) AS since FROM ${table} WHERE slot = $1`,
      [SLOT],
    );
    if (policy.key === undefined) {
      if (kept) return { policy: { ...policy, key: kept.key } };
      // two processes on a new PostgreSQL warehouse may both get here: the first key kept is the one
      await conn.run(
        `INSERT INTO ${table} (slot, key, origin, created_at) VALUES ($1, $2, 'generated', CAST($3 AS TIMESTAMPTZ)) ON CONFLICT (slot) DO NOTHING`,
        [SLOT, randomBytes(32).toString('hex'), now],
      );
      const [made] = await conn.all<{ key: string }>(`SELECT key FROM ${table} WHERE slot = $1`, [SLOT]);
      return { policy: { ...policy, key: made!.key }, generated: true };
    }
    if (!kept) {
      await conn.run(
        `INSERT INTO ${table} (slot, key, origin, created_at) VALUES ($1, $2, 'LOYALTY_PII_SALT', CAST($3 AS TIMESTAMPTZ))`,
        [SLOT, policy.key, now],
      );
      return { policy };
    }
    if (kept.key === policy.key) return { policy };
    await conn.run(
      `UPDATE ${table} SET key = $2, origin = 'LOYALTY_PII_SALT', changed_at = CAST($3 AS TIMESTAMPTZ) WHERE slot = $1`,
      [SLOT, policy.key, now],
    );
    return { policy, changed: { previousOrigin: kept.origin, keptSince: kept.since } };
  });
}
