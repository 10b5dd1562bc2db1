import { pMapIterable } from 'p-map';
import type { CustomerReject } from '../extract/askable-customer.js';
import type { StreamName } from '../plan/job-plan.js';
import type { Window } from '../plan/windows.js';
import type { ExtractedBatch, SelectedCustomer, StreamContext } from './stream.js';

/** One customer's answer, as a per-customer stream reads it: why the service could not be asked, if it could not. */
export interface CustomerAnswer {
  rejected?: CustomerReject;
}

/** What a per-customer stream brings to the fan-out ({@link askEachCustomer}), made afresh for each span. */
export interface CustomerFanOut<A extends CustomerAnswer> {
  stream: StreamName;
  /** Asks the service about one customer; a customer it cannot be asked about comes back `rejected`. */
  ask(customer: SelectedCustomer): Promise<A>;
  /** Takes one customer's answer, as answers come (not in the selection's order), and yields the batches it fills. */
  take(answer: A): Iterable<ExtractedBatch>;
  /** Yields what is left once every customer has answered. */
  rest(): Iterable<ExtractedBatch>;
  /** The line logged once every customer is asked, and the stream's own counts in it. */
  summary(): { message: string; counts: Record<string, number> };
}

/**
 * The fan-out of every per-customer stream (postings, loyalty status, vouchers): asks each customer the pipeline
 * selected for the span, `source.concurrency` at a time, and hands each answer to the stream as it comes, to be
 * turned into batches: a customer that keeps its lane waiting holds up that lane alone. A customer the service cannot be asked about is logged here (the stream
 * stages its reject); once every customer is asked, one line says how many, with the span's requests.
 */
export async function* askEachCustomer<A extends CustomerAnswer>(
  ctx: StreamContext,
  span: Window[],
  fanOut: CustomerFanOut<A>,
): AsyncGenerator<ExtractedBatch> {
  const { stream } = fanOut;
  if (!ctx.customers) throw new Error(`${stream}: no customers were selected for the span`);
  // Answers are taken as they come: in the selection's order, one customer whose request hangs until its time-out
  // would hold back every answer after it, and those held answers would stop the other lanes from asking on.
  const answers = pMapIterable(ctx.customers, (customer) => fanOut.ask(customer), {
    concurrency: ctx.concurrency,
    preserveOrder: false,
  });
  let asked = 0;
  let rejected = 0;
  for await (const answer of answers) {
    asked++;
    if (answer.rejected) {
      rejected++;
      ctx.logger.warn(
        { stream, customerId: answer.rejected.payload.customerId, reason: answer.rejected.error },
        'customer cannot be asked; rejected',
      );
    }
    yield* fanOut.take(answer);
  }
  yield* fanOut.rest();
  const { message, counts } = fanOut.summary();
  ctx.logger.info(
    {
      stream,
      window: `${span[0]!.start}..${span.at(-1)!.end}`,
      customersAsked: asked,
      customersRejected: rejected,
      ...counts,
      requests: ctx.api.counter.requests,
    },
    message,
  );
}
