import type { CustomerRule, PostingsSweep } from '../plan/customer-rule.js';
import { addDays, maxDay, type Day } from '../plan/days.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { Window } from '../plan/windows.js';
import { lastEventSeq, readEventBookmark } from './event-bookmark.js';
import { pagedSelection, type SelectedRow } from './paged-selection.js';
import type {
  CustomerSelection,
  CustomerSelectionKind,
  SelectedCustomer,
  WarehouseRead,
} from './selected-customers.js';
import { lastDueId, signsAndSweepCustomers, sweepOrder, sweepTerms, type SweepOrder } from './sweep-selection.js';

export type {
  CustomerSelection,
  CustomerSelectionKind,
  SelectedCustomer,
  WarehouseRead,
} from './selected-customers.js';

/**
 * The customers a per-customer stream asks for `span`, streamed from the warehouse in key order; it reads and
 * never writes:
 * - `all`: every customer in `accounts` (the whole directory) the export listed by the span's last day: a
 *   customer the export first listed after it was created after it, so has no posting in the span (a customer
 *   no export window listed is asked all the same);
 * - `changed`: customers whose account was seen in one of the span's windows (`_etl_account_windows`) —
 *   cheaper, and misses postings of customers whose profile did not change in the window;
 * - `webhook`: the customers named by loyalty webhook events received since the stream's bookmark;
 * - `changed` and `webhook` with a sweep (`postings.sweep_days`): also the customers the sweep takes, in the
 *   state streams' order ({@link sweepOrder}) on the postings' own observations; each of those keeps its postings
 *   since it was last asked (`readFrom`), so a posting no sign announced is loaded within `sweep_days` nights;
 * - `signs-and-sweep`: see {@link signsAndSweepCustomers}.
 *
 * A first night left to the sweep (`first_night: sweep`) asks the sweep's quota once, in the span that reaches
 * `runThrough` (the last day the run planned for the stream; every span when undefined): a quota in every span
 * asked as many nights' worth as the night had spans, and two lanes side by side took the same customers twice.
 */
export async function selectCustomers(
  read: WarehouseRead,
  job: string,
  stream: string,
  rule: CustomerRule | CustomerSelectionKind,
  span: Window[],
  now: Date = new Date(),
  runId = '',
  runThrough?: Day,
): Promise<CustomerSelection> {
  // a first night is the job's first run of the stream, all of its spans: no customer asked by an earlier run
  let first: Promise<boolean> | undefined;
  const firstNight = () => (first ??= read(async (conn) => !(await observedBefore(conn, stream, runId))));
  const reachesRunEnd = runThrough === undefined || span.at(-1)!.end >= runThrough;
  if (typeof rule === 'string') rule = { kind: rule };
  // a first night left to the sweep (`first_night: sweep`): every customer is new, so no sign counts, and only
  // the span reaching the run's last day takes the sweep's quota
  const firstNightSweep = rule.kind === 'signs-and-sweep' ? rule.firstNightSweep : rule.sweep?.firstNightSweep;
  const leftToSweep = firstNightSweep === true && (await firstNight());
  if (rule.kind === 'signs-and-sweep')
    return signsAndSweepCustomers(
      read,
      job,
      stream,
      rule.sweepDays,
      span,
      now,
      !leftToSweep,
      !leftToSweep || reachesRunEnd,
    );
  const { kind } = rule;
  if (kind === 'all') return { kind, ...accountCustomers(read, kind, span, stream) };
  const sweep = leftToSweep && !reachesRunEnd ? undefined : rule.sweep;
  const swept = sweep ? { sweep, order: await sweepOrder(read, stream, sweep.sweepDays, now) } : undefined;
  // with a sweep, a first night (nobody observed yet) asks every customer, so that history starts complete, unless
  // `first_night: sweep` leaves them to the sweep
  if (kind === 'changed') {
    const everyone = sweep !== undefined && !sweep.firstNightSweep && (await firstNight());
    return {
      kind,
      ...(everyone
        ? accountCustomers(read, 'all', span, stream)
        : accountCustomers(read, kind, span, stream, swept, !leftToSweep)),
    };
  }
  const { after, through } = await read(async (conn) => ({
    after: await readEventBookmark(conn, job, stream),
    through: await lastEventSeq(conn),
  }));
  // a first night asks every customer, so that history starts complete; unless the sweep is to take them over
  // a customer first listed in the span (a new one) and never asked is asked with the sweep, as an account change is a sign for
  // the state streams (a first night left to the sweep excepted: every customer is new then)
  const newcomers = after === undefined || leftToSweep ? undefined : { start: span[0]!.start, end: span.at(-1)!.end };
  const customers =
    after === undefined && !firstNightSweep
      ? accountCustomers(read, 'all', span, stream)
      : eventCustomers(read, after ?? 0, through, stream, swept, newcomers);
  return { kind, ...customers, events: { after, through } };
}

/** Whether a run other than `runId` asked a customer for `stream`. */
async function observedBefore(conn: SqlConnection, stream: string, runId: string): Promise<boolean> {
  const rows = await conn.all(
    `SELECT 1 AS one FROM ${conn.schemaSql}._etl_customer_observations WHERE stream = $1 AND _run_id <> $2 LIMIT 1`,
    [stream, runId],
  );
  return rows.length > 0;
}

/** A span's postings sweep: the rule, and where its quota ends. */
interface Swept {
  sweep: PostingsSweep;
  order: SweepOrder;
}

/** The selection's relation with the sweep: `base` (true for a customer the selection itself asks) or `swept`. */
function sweptColumns(
  swept: Swept | undefined,
  s: string,
  p: { stream: string; lastDueId: string; staleBefore: string },
  base: string,
) {
  if (!swept) return { joins: '', where: base, columns: '', flag: undefined };
  const terms = sweepTerms(s, swept.order, p);
  return {
    where: `(${base} OR ${terms.swept})`,
    // the last day of the span that last asked the customer: its windows were recorded with the observation's commit
    joins: `${terms.joins}
            LEFT JOIN (SELECT finished_at, CAST(MAX(window_end) AS VARCHAR) AS through FROM ${s}._etl_windows
                        WHERE stream = ${p.stream} AND status = 'done' GROUP BY finished_at) lw ON lw.finished_at = o._loaded_at`,
    // a customer never asked keeps its postings from the first day, whatever took it (the sweep, a sign)
    columns: `, CASE WHEN ${terms.swept} OR o.observed_at IS NULL THEN 1 ELSE 0 END AS swept, lw.through AS read_through`,
    flag: true as const,
  };
}

/** A selected row as the stream asks it: a swept customer keeps its postings since it was last asked. */
function sweptCustomer(swept: Swept | undefined): (row: SelectedRow) => SelectedCustomer {
  return (r) => {
    const customer: SelectedCustomer = { customerId: r.customer_id, phone: r.phone, email: r.email };
    if (!swept || !(r.swept === true || Number(r.swept) === 1)) return customer;
    const { firstDay, lookbackDays } = swept.sweep;
    // never asked, or the span that asked it is no longer in the ledger (its windows were loaded again since): from the first day
    if (r.read_through === null || r.read_through === undefined) return { ...customer, readFrom: firstDay };
    return { ...customer, readFrom: maxDay(firstDay, addDays(r.read_through, -lookbackDays)) };
  };
}

function accountCustomers(
  read: WarehouseRead,
  kind: 'all' | 'changed',
  span: Window[],
  stream: string,
  swept?: Swept,
  signs = true,
): Pick<CustomerSelection, 'customers' | 'count'> {
  const range = kind === 'changed' ? [span[0]!.start, span.at(-1)!.end] : [span.at(-1)!.end];
  const next = range.length + 2;
  const p = { stream: `$${next}`, lastDueId: `$${next + 1}`, staleBefore: `$${next + 2}` };
  return pagedSelection(
    read,
    (conn, after) => {
      const listed = `SELECT 1 FROM ${conn.schemaSql}._etl_account_windows w WHERE w.customer_id = a.customer_id`;
      const changed =
        kind === 'changed'
          ? // without signs the terms stay in the query, so that PostgreSQL still types their parameters
            `(${signs ? 'TRUE' : 'FALSE'} AND EXISTS (${listed} AND w._window_start BETWEEN CAST($2 AS DATE) AND CAST($3 AS DATE)))`
          : // a first run from an early first_day asks nobody for the months before the program's customers existed
            `(EXISTS (${listed} AND w._window_start <= CAST($2 AS DATE)) OR NOT EXISTS (${listed}))`;
      const t = sweptColumns(swept, conn.schemaSql, p, changed);
      return {
        from: `FROM (SELECT a.customer_id, a.phone, a.email${t.columns} FROM ${conn.schemaSql}.accounts a ${t.joins} WHERE a.customer_id > $1 AND ${t.where}) s`,
        params: [after, ...range, ...(swept ? [stream, lastDueId(swept.order), swept.order.staleBefore] : [])],
        swept: t.flag,
      };
    },
    sweptCustomer(swept),
  );
}

/**
 * The customers of the `loyalty_events` numbered in (`after`, `through`], in key order, each once, with the
 * phone and e-mail `accounts` holds (the event's phone when the account is not loaded yet), and with a sweep the
 * customers it takes. One with neither phone nor e-mail cannot be asked: the stream rejects it.
 */
function eventCustomers(
  read: WarehouseRead,
  after: number,
  through: number,
  stream: string,
  swept?: Swept,
  newcomers?: { start: string; end: string },
): Pick<CustomerSelection, 'customers' | 'count'> {
  if (!swept)
    return pagedSelection(read, (conn, last) => ({
      from: `FROM (SELECT e.customer_id, COALESCE(a.phone, e.phone) AS phone, a.email
                     FROM (SELECT customer_id, MAX(phone) AS phone FROM ${conn.schemaSql}.loyalty_events
                            WHERE seq > $1 AND seq <= $2 AND customer_id > $3 GROUP BY customer_id) e
                     LEFT JOIN ${conn.schemaSql}.accounts a ON a.customer_id = e.customer_id) s`,
      params: [after, through, last],
    }));
  return pagedSelection(
    read,
    (conn, last) => {
      const s = conn.schemaSql;
      const events = `(SELECT customer_id, MAX(phone) AS phone FROM ${s}.loyalty_events WHERE seq > $1 AND seq <= $2 AND customer_id > $3 GROUP BY customer_id)`;
      const windows = `SELECT 1 FROM ${s}._etl_account_windows w WHERE w.customer_id = a.customer_id`;
      // first listed in the span: a new customer, not an old one that changed before it was ever asked
      const listed = `EXISTS (${windows} AND w._window_start BETWEEN CAST($7 AS DATE) AND CAST($8 AS DATE)) AND NOT EXISTS (${windows} AND w._window_start < CAST($7 AS DATE))`;
      const newcomer = newcomers ? ` OR (o.observed_at IS NULL AND ${listed})` : '';
      const t = sweptColumns(
        swept,
        s,
        { stream: '$4', lastDueId: '$5', staleBefore: '$6' },
        `e.customer_id IS NOT NULL${newcomer}`,
      );
      // the directory's customers with an event or taken by the sweep, then those named by events but not in `accounts` yet
      return {
        from: `FROM (SELECT a.customer_id, COALESCE(a.phone, e.phone) AS phone, a.email${t.columns}
                       FROM ${s}.accounts a LEFT JOIN ${events} e ON e.customer_id = a.customer_id ${t.joins}
                      WHERE a.customer_id > $3 AND ${t.where}
                     UNION ALL
                     SELECT e.customer_id, e.phone, NULL, 0, NULL FROM ${events} e
                      WHERE NOT EXISTS (SELECT 1 FROM ${s}.accounts a WHERE a.customer_id = e.customer_id)) s`,
        params: [
          after,
          through,
          last,
          stream,
          lastDueId(swept.order),
          swept.order.staleBefore,
          ...(newcomers ? [newcomers.start, newcomers.end] : []),
        ],
        swept: t.flag,
      };
    },
    sweptCustomer(swept),
  );
}
