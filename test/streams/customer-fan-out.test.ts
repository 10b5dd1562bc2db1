import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { askEachCustomer, type CustomerFanOut } from '../../src/streams/customer-fan-out.js';
import type { ExtractedBatch, SelectedCustomer, StreamContext } from '../../src/streams/stream.js';

const SPAN = [{ start: '2024-03-01', end: '2024-03-01' }];

async function* customers(n: number): AsyncGenerator<SelectedCustomer> {
  for (let i = 0; i < n; i++)
    yield { customerId: `c${String(i).padStart(3, '0')}`, phone: null, email: `c${i}@x.test` };
}

describe('askEachCustomer', () => {
  it('asks the other customers on while one customer keeps its lane waiting, and takes every answer once', async () => {
    const total = 40;
    const asked = new Set<string>();
    let everyOtherAsked!: () => void;
    const othersAsked = new Promise<void>((resolve) => (everyOtherAsked = resolve));
    const taken: string[] = [];
    const fanOut: CustomerFanOut<{ customerId: string; rejected?: undefined }> = {
      stream: 'loyalty_status',
      async ask(customer) {
        asked.add(customer.customerId);
        if (asked.size === total) everyOtherAsked();
        // the first customer's request hangs until every other customer has been asked: with the answers taken
        // in the selection's order, the lanes would stop once a few answers wait behind it, and it never ends
        if (customer.customerId === 'c000') await othersAsked;
        return { customerId: customer.customerId };
      },
      take(answer): ExtractedBatch[] {
        taken.push(answer.customerId);
        return [];
      },
      rest: () => [],
      summary: () => ({ message: 'read', counts: {} }),
    };
    const ctx = {
      customers: customers(total),
      concurrency: 4,
      logger: silentLogger,
      api: { counter: { requests: 0 } },
    } as unknown as StreamContext;
    for await (const _ of askEachCustomer(ctx, SPAN, fanOut));
    expect(taken).toHaveLength(total);
    expect(new Set(taken).size).toBe(total);
    expect(taken.at(-1)).toBe('c000');
  });
});
