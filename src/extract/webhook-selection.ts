import type { Window } from '../plan/windows.js';
import type { CustomerIdentity } from '../source/loyalty-api.js';
import { advanceEventBookmark, lastEventSeq, readEventBookmark } from '../state/event-bookmark.js';
import type { StreamContext } from '../streams/stream.js';
import { eventCustomers, selectCustomers } from './customer-selection.js';

/** What the `webhook` selection chose for a span, for the stream's log line. */
export interface WebhookSelection {
  customers: AsyncIterable<CustomerIdentity>;
  /** The bookmark the span started from; undefined on the job's first span, which asks every customer. */
  after: number | undefined;
  /** The last event the selection covers. */
  through: number;
}

/**
 * The postings selection `webhook`: the customers named by loyalty webhook events received since the job's
 * postings stream last committed (its bookmark, `state/event-bookmark.ts`). Without a bookmark — the first
 * span of the job with this selection — it asks every known customer, so history starts complete. The
 * bookmark moves in the span's own transaction (`ctx.onCommit`): a span that fails leaves it where it was.
 */
export async function selectWebhookCustomers(ctx: StreamContext, stream: string, span: Window[]): Promise<WebhookSelection> {
  const { after, through } = await ctx.destination.withConnection(async (conn) => ({
    after: await readEventBookmark(conn, ctx.job, stream),
    through: await lastEventSeq(conn),
  }));
  ctx.onCommit?.((conn, commit) => advanceEventBookmark(conn, { job: ctx.job, stream, askedThrough: through, timezone: ctx.timezone, runId: commit.runId, now: commit.loadedAt }));
  if (after === undefined) return { customers: selectCustomers(ctx.destination, 'all', span), after, through };
  return { customers: eventCustomers(ctx.destination, after, through).customers, after, through };
}
