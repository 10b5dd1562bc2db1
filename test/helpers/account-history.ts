import type { Destination } from '../../src/load/destination.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';
import type { Row } from '../../src/load/table-spec.js';
import { commitWindows } from '../../src/pipeline/load-span.js';
import { accountsStream, withCustomFields } from '../../src/streams/accounts.js';

/** What one window of the export served of one customer. */
export interface Served {
  row: Row;
  fields: Record<string, string | null>;
}

/** A window of the accounts export: its day and the customers it served. */
export interface ServedWindow {
  day: string;
  accounts: Served[];
}

/** A version as a test compares it: the content, its validity; not the run that loaded it. */
export interface Version {
  customer_id: string;
  city: string | null;
  email: string | null;
  custom_fields: Record<string, string | null>;
  valid_from: string;
  valid_to: string | null;
  is_current: boolean;
}

/** Loads consecutive windows as one span of the accounts stream, with every table the stream writes. */
export async function loadAccountWindows(
  destination: Destination,
  windows: ServedWindow[],
  runId = `run-${windows[0]!.day}`,
): Promise<void> {
  const span = windows.map((w) => ({ start: w.day, end: w.day }));
  const load = await destination.openSpan({
    job: 'j',
    stream: 'accounts',
    runId,
    windows: span,
    tables: accountsStream.tables,
  });
  let seq = 0;
  for (const w of windows) {
    for (const a of w.accounts) {
      seq++;
      await load.append('accounts', [
        { seq, windowStart: w.day, row: withCustomFields(a.row, new Map(Object.entries(a.fields))) },
      ]);
    }
  }
  await commitWindows(
    load,
    { job: 'j', stream: 'accounts', runId, firstDay: '2024-01-01' },
    span,
    new Map(windows.map((w) => [w.day, w.accounts.length])),
    1,
  );
}

/** `accounts_history`, in customer and time order. */
export async function readHistory(conn: SqlConnection): Promise<Version[]> {
  const rows = await conn.all<
    Omit<Version, 'custom_fields' | 'is_current'> & { custom_fields: string; is_current: boolean | string }
  >(
    `SELECT customer_id, city, email, CAST(custom_fields AS VARCHAR) AS custom_fields, CAST(valid_from AS VARCHAR) AS valid_from,
            CAST(valid_to AS VARCHAR) AS valid_to, is_current
       FROM accounts_history ORDER BY customer_id, valid_from`,
  );
  return rows.map((r) => ({
    ...r,
    custom_fields: JSON.parse(r.custom_fields),
    is_current: r.is_current === true || r.is_current === 'true',
  }));
}

/**
 * The versions loading every window once, in time order, must give: per customer, a version starts at each window
 * that served content different from the window that served it before, and ends where the next one starts.
 */
export function inOrderHistory(windows: ServedWindow[]): Version[] {
  const byCustomer = new Map<string, Array<{ day: string; served: Served }>>();
  for (const w of [...windows].sort((a, b) => (a.day < b.day ? -1 : 1))) {
    for (const served of w.accounts) {
      const id = String(served.row.customer_id);
      const list = byCustomer.get(id) ?? [];
      byCustomer.set(id, list);
      list.push({ day: w.day, served });
    }
  }
  const versions: Version[] = [];
  for (const id of [...byCustomer.keys()].sort()) {
    const mine: Version[] = [];
    let previous: string | undefined;
    for (const { day, served } of byCustomer.get(id)!) {
      const content = JSON.stringify([served.row, Object.entries(served.fields).sort()]);
      if (content === previous) continue;
      previous = content;
      const last = mine.at(-1);
      if (last) {
        last.valid_to = day;
        last.is_current = false;
      }
      const r = served.row;
      mine.push({
        customer_id: id,
        city: r.city as string | null,
        email: r.email as string | null,
        custom_fields: served.fields,
        valid_from: day,
        valid_to: null,
        is_current: true,
      });
    }
    versions.push(...mine);
  }
  return versions;
}
