import { WarehouseConnectionError } from '../load/warehouse/warehouse-errors.js';
/** Waits before each new attempt to record a run's end on a warehouse that lost its connection: about 30 s in all. */
const RECONNECT_WAITS_MS = [500, 1000, 2000, 4000, 8000, 15_000];

/**
 * Runs `record` (the end of a run: its status, its claims let go), again on a new session while the warehouse's
 * connection is lost: a server restarting is back within seconds, and a run recorded as ended frees its windows at
 * once instead of when its lease runs out.
 */
export async function recordWhileReconnecting(record: () => Promise<void>): Promise<void> {
  for (const wait of RECONNECT_WAITS_MS) {
    try {
      return await record();
    } catch (error) {
      if (!(error instanceof WarehouseConnectionError)) throw error;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  return record();
}
