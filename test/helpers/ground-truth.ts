import type { DestinationSettings } from '../../src/plan/job-plan.js';
import type { Emulator } from '../../src/emulator/index.js';
import { readAccounts, readPostings, readSurveyResponses, sortedByJson, withWarehouse } from './warehouse-reader.js';

/** Every stream's tables, read back in the emulator's truth shapes (sorted multisets). */
export async function warehouseContents(config: DestinationSettings) {
  return withWarehouse(config, async (conn) => ({
    accounts: new Map([...(await readAccounts(conn))].sort(([a], [b]) => (a < b ? -1 : 1))),
    surveys: sortedByJson(await readSurveyResponses(conn)),
    postings: sortedByJson(await readPostings(conn)),
  }));
}

/** What the warehouse must hold after loading [start, end] of every stream. */
export function truthContents(emulator: Emulator, start: string, end: string) {
  return {
    accounts: new Map(
      [...emulator.truth.accounts(start, end)]
        .map((a) => [a.customer_id, { ...a }] as const)
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    ),
    surveys: sortedByJson([...emulator.truth.surveyResponses(start, end)].map((r) => ({ ...r }))),
    postings: sortedByJson([...emulator.truth.postings(start, end)].map((p) => ({ ...p }))),
  };
}
