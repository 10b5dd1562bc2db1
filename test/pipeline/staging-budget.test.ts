import { describe, expect, it } from 'vitest';
import { StagingBudget, stagedBytes, type SpanShare } from '../../src/pipeline/staging-budget.js';

/** Takes `bytes` for a span and records, in `order`, when the take was granted. */
async function taken(share: SpanShare, bytes: number, name: string, order: string[]): Promise<void> {
  await share.take(bytes);
  order.push(name);
}

/** Lets every grant that is due run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('staging budget', () => {
  it('lets the oldest span in flight stage beyond the limit, and holds the younger ones until there is room', async () => {
    const budget = new StagingBudget(100);
    const [a, b, c] = [budget.open(), budget.open(), budget.open()];
    const order: string[] = [];
    expect(a.take(500)).toBeUndefined(); // the oldest: never waits, whatever the budget holds
    void taken(b, 10, 'b', order);
    void taken(c, 10, 'c', order);
    await settle();
    expect(order).toEqual([]);
    expect(budget.inUse).toBe(500);
    a.release();
    await settle();
    // b is the oldest now; c fits beside it
    expect(order).toEqual(['b', 'c']);
    expect(budget.inUse).toBe(20);
  });

  it('never lets a younger span overtake an older one that waits, even when the younger one would fit', async () => {
    const budget = new StagingBudget(100);
    const [a, b, c] = [budget.open(), budget.open(), budget.open()];
    const order: string[] = [];
    expect(a.take(60)).toBeUndefined();
    void taken(b, 50, 'b', order); // does not fit beside a's 60
    await settle();
    void taken(c, 10, 'c', order); // would fit, but b waits before it
    await settle();
    expect(order).toEqual([]);
    a.release();
    await settle();
    expect(order).toEqual(['b', 'c']);
  });

  it('lets a younger span stage while there is room', () => {
    const budget = new StagingBudget(100);
    const [a, b] = [budget.open(), budget.open()];
    expect(a.take(40)).toBeUndefined();
    expect(b.take(60)).toBeUndefined();
    expect(b.take(1)).toBeInstanceOf(Promise);
  });

  it('brings every span through a budget of nothing, one after the other in the order they opened', async () => {
    const budget = new StagingBudget(0);
    const order: string[] = [];
    // each span stages three batches and then ends (its staging released)
    const span = async (name: string) => {
      const share = budget.open();
      try {
        for (let i = 0; i < 3; i++) {
          await share.take(10);
          order.push(name);
          await settle();
        }
      } finally {
        share.release();
      }
    };
    await Promise.all(['a', 'b', 'c', 'd'].map(span));
    expect(order).toEqual(['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'c', 'd', 'd', 'd']);
    expect(budget.inUse).toBe(0);
  });

  it('gives back what a span took once, whatever its release is called', () => {
    const budget = new StagingBudget(100);
    const a = budget.open();
    const b = budget.open();
    a.take(30);
    b.take(30);
    a.release();
    a.release();
    expect(budget.inUse).toBe(30);
    expect(() => a.take(1)).toThrow(/after it was released/);
  });

  it('estimates a row as its values, long texts by their length', () => {
    expect(stagedBytes([{ row: { a: 1, b: null, c: 'short' } }])).toBe(32 + 3 * 16);
    expect(stagedBytes([{ row: { a: 'x'.repeat(100) } }, { row: {} }])).toBe(32 + 16 + 100 + 32);
  });
});
