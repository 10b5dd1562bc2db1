import { z } from 'zod';
import type { StreamName } from '../plan/job-plan.js';
import type { Window } from '../plan/windows.js';
import type { CustomerReject } from '../extract/askable-customer.js';
import { readCustomerState, type CustomerStateRead, type CustomerStateRecord } from '../extract/customer-state.js';
import type { Row, TableSpec } from '../load/table-spec.js';
import { askEachCustomer, type CustomerFanOut } from './customer-fan-out.js';
import { customerObservationsTable } from './customer-observations.js';
import type { CustomerIdentity, LoyaltyApi } from '../source/loyalty-api.js';
import { RecordError } from '../transform/record-error.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';
import type { ExtractedBatch, NormalizedRecord, StreamContext, StreamDefinition } from './stream.js';
import { zodProblem } from './zod-problem.js';

export { customerObservationsTable } from './customer-observations.js';

/** Customers' records staged per batch. */
const BATCH = 500;

const recordSchema = z.discriminatedUnion('outcome', [
  z.object({
    customerId: z.string().min(1),
    observedAt: z.string(),
    outcome: z.literal('answered'),
    answer: z.unknown(),
  }),
  z.object({ customerId: z.string().min(1), observedAt: z.string(), outcome: z.enum(['not_found', 'unaskable']) }),
]);

/** What a state stream declares: its name, its tables (the main one first), how to ask, how to turn an answer into rows. */
export interface CustomerStateDeclaration {
  name: StreamName;
  /** The stream's tables, main table first; the observations table is added after them. */
  tables: TableSpec[];
  /** What the call is, in messages: `loyalty`, `vouchers`. */
  what: string;
  ask(api: LoyaltyApi, customer: CustomerIdentity): Promise<unknown>;
  /**
   * The rows of one answered customer, per table; a bad answer throws a RecordError, and the customer's whole
   * answer is rejected (its rows in the warehouse stay as they were: nothing is replaced from half an answer).
   */
  rows(customerId: string, answer: unknown, observedAt: string, timezone: string): NormalizedRecord;
}

/**
 * A stream of what the service knows about each customer today (loyalty status, vouchers): the per-customer
 * fan-out of the postings ({@link askEachCustomer}), on the customers the pipeline selected (signs of change plus
 * the sweep), `source.concurrency` at a time. A span asks each selected customer once and files every row under
 * its last window: the night the state was observed. Each customer's answer is one record, normalized to its rows
 * and an observation.
 */
export function customerStateStream(declaration: CustomerStateDeclaration): StreamDefinition {
  const { name } = declaration;
  return {
    name,
    tables: [...declaration.tables, customerObservationsTable],
    customerRule: (job) => ({
      kind: 'signs-and-sweep',
      sweepDays: job.sweep_days,
      firstNightSweep: job.first_night === 'sweep',
    }),
    // a night's windows (its look-back too) are one span: the state is asked once, whatever their number
    maxWindowsPerSpan: (job) => Math.max(1, Math.floor(366 / job.window_days)),
    // one span keeps `source.concurrency` requests in flight by itself
    lanes: () => 1,
    async *extract(ctx: StreamContext, span): AsyncGenerator<ExtractedBatch> {
      yield* askEachCustomer(ctx, span, stateFanOut(ctx, span, declaration));
    },
    normalizer: (ctx) => (raw) => {
      const parsed = recordSchema.safeParse(raw);
      if (!parsed.success) throw new RecordError('', zodProblem(parsed.error));
      const record = parsed.data;
      const observedAt = parseSourceTimestamp(record.observedAt, 'UTC', 'observedAt');
      const observation: Row = {
        stream: name,
        customer_id: record.customerId,
        observed_at: observedAt,
        outcome: record.outcome,
      };
      const rows =
        record.outcome === 'answered'
          ? declaration.rows(record.customerId, record.answer, observedAt, ctx.timezone)
          : {};
      return { ...rows, [customerObservationsTable.name]: [observation] };
    },
  };
}

/**
 * A state stream's side of the fan-out ({@link askEachCustomer}), for one span: each customer's answer is one record,
 * filed under the span's last window.
 */
function stateFanOut(
  ctx: StreamContext,
  span: Window[],
  declaration: CustomerStateDeclaration,
): CustomerFanOut<CustomerStateRead> {
  const { name, what } = declaration;
  const windowStart = span.at(-1)!.start;
  let records: CustomerStateRecord[] = [];
  let rejects: CustomerReject[] = [];
  let notFound = 0;
  return {
    stream: name,
    ask: (customer) =>
      readCustomerState(
        customer,
        `${what} of ${customer.customerId}`,
        () => declaration.ask(ctx.api, customer),
        () => ctx.api.observedAt(customer),
      ),
    *take(read) {
      if (read.record.outcome === 'not_found') notFound++;
      if (read.rejected) rejects.push(read.rejected);
      records.push(read.record);
      if (records.length >= BATCH) {
        yield { windowStart, records, restart: false, rejects };
        [records, rejects] = [[], []];
      }
    },
    *rest() {
      yield { windowStart, records, restart: false, rejects };
    },
    summary: () => ({ message: `${what} read`, counts: { customersNotFound: notFound } }),
  };
}
