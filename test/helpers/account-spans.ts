import type { Destination } from '../../src/load/destination.js';
import type { Row } from '../../src/load/table-spec.js';
import { commitWindows } from '../../src/pipeline/load-span.js';
import type { WindowCounts } from '../../src/state/ledger.js';
import { accountCustomFieldsTable, accountsTable, withCustomFields } from '../../src/streams/accounts.js';

/** An `accounts` row as the transform makes it. */
export function account(id: string, city: string | null): Row {
  return {
    customer_id: id,
    phone: null,
    email: `${id}@x.test`,
    first_name: 'A',
    last_name: 'B',
    birthdate: '1990-01-02',
    source: 'pos',
    profile_set_at: '2024-01-01T10:00:00.000Z',
    country: 'GR',
    customer_since: null,
    member_since: null,
    nationality: null,
    gender: 'F',
    city,
    language: 'el',
  };
}

/** Loads `accounts` with their custom fields as one span of the accounts stream for the day `windowStart`. */
export async function loadAccounts(
  destination: Destination,
  windowStart: string,
  accounts: Array<{ row: Row; fields: Record<string, string | null> }>,
  runId = `run-${windowStart}`,
): Promise<WindowCounts[]> {
  const span = await destination.openSpan({
    job: 'j',
    stream: 'accounts',
    runId,
    windows: [{ start: windowStart, end: windowStart }],
    tables: [accountsTable, accountCustomFieldsTable],
  });
  let seq = 0;
  for (const a of accounts) {
    seq++;
    await span.append('accounts', [
      { seq, windowStart, row: withCustomFields(a.row, new Map(Object.entries(a.fields))) },
    ]);
  }
  return commitWindows(
    span,
    { job: 'j', stream: 'accounts', runId, firstDay: '2024-01-01' },
    [{ start: windowStart, end: windowStart }],
    new Map([[windowStart, accounts.length]]),
    1,
  );
}
