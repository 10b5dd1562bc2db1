import { describe, expect, it } from 'vitest';
import { StagingBudget, stagedBytes, type SpanShare } from '../../src/pipeline/staging-budget.js';

/** Waits for room for a span and records, in `order`, when it may read on. */
async function reads(share: SpanShare, name: string, order: string[]): Promise<void> {
  await share.room();
  order.push(name);
}

/** Lets every span that may read on do so. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('staging budget', () => {
  it('lets the oldest span in flight read on beyond the limit, and holds the younger ones until there is room', async () => {
    const budget = new StagingBudget(100);
    const [a, b, c] = [budget.open(), budget.open(), budget.open()];
    const order: string[] = [];
    a.add(500);
    expect(a.room()).toBeUndefined(); // the oldest: never waits, whatever the budget holds
    void reads(b, 'b', order);
    void reads(c, 'c', order);
    await settle();
    expect(order).toEqual([]);
    expect(budget.inUse).toBe(500);
    a.release();
    await settle();
    // b is the oldest now, and the budget holds nothing: both read on
    expect(order).toEqual(['b', 'c']);
    expect(budget.inUse).toBe(0);
  });

  it('never lets a younger span overtake an older one that waits', async () => {
    const budget = new StagingBudget(100);
    const [a, b, c] = [budget.open(), budget.open(), budget.open()];
    const order: string[] = [];
    a.add(60);
    b.add(50); // b staged a page while there was room; now the budget is full
    void reads(b, 'b', order);
    await settle();
    expect(order).toEqual([]);
    b.release(); // b ends (its rows committed); the budget holds a's 60 again
    await settle();
    void reads(c, 'c', order);
    await settle();
    expect(order).toEqual(['b', 'c']);
    const d = budget.open();
    const e = budget.open();
    c.add(100);
    const waits: string[] = [];
    void reads(d, 'd', waits);
    await settle();
    // e would be held behind d even when it asks while d waits
    void reads(e, 'e', waits);
    await settle();
    expect(waits).toEqual([]);
    a.release(); // 100 held by c: still no room, and neither d nor e is the oldest
    await settle();
    expect(waits).toEqual([]);
    c.release(); // d is the oldest: it reads on, and e with it since the budget is empty
    await settle();
    expect(waits).toEqual(['d', 'e']);
  });

  it("hands the oldest span's place on once it has read all its pages, while it commits", async () => {
    const budget = new StagingBudget(100);
    const [a, b, c] = [budget.open(), budget.open(), budget.open()];
    const order: string[] = [];
    a.add(500);
    void reads(b, 'b', order);
    void reads(c, 'c', order);
    await settle();
    expect(order).toEqual([]);
    a.readAll(); // a commits: its rows are still held, but b reads on in its place
    await settle();
    expect(order).toEqual(['b']);
    expect(budget.inUse).toBe(500);
    a.release();
    await settle();
    expect(order).toEqual(['b', 'c']);
  });

  it('lets a younger span read on while the spans hold less than the limit', () => {
    const budget = new StagingBudget(100);
    const [a, b] = [budget.open(), budget.open()];
    a.add(40);
    expect(b.room()).toBeUndefined();
    b.add(60);
    expect(b.room()).toBeInstanceOf(Promise);
  });

  it('brings every span through a budget of nothing, one after the other in the order they opened', async () => {
    const budget = new StagingBudget(0);
    const order: string[] = [];
    // each span reads three pages, stages each, and ends (its staging released)
    const span = async (name: string) => {
      const share = budget.open();
      try {
        for (let i = 0; i < 3; i++) {
          await share.room();
          order.push(name);
          share.add(10);
          await settle();
        }
        share.readAll();
        await settle(); // the commit
      } finally {
        share.release();
      }
    };
    await Promise.all(['a', 'b', 'c', 'd'].map(span));
    expect(order).toEqual(['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'c', 'd', 'd', 'd']);
    expect(budget.inUse).toBe(0);
  });

  it('gives back what a span staged once, however often its release is called', () => {
    const budget = new StagingBudget(100);
    const a = budget.open();
    const b = budget.open();
    a.add(30);
    b.add(30);
    a.release();
    a.release();
    expect(budget.inUse).toBe(30);
    expect(() => a.add(1)).toThrow(/after its share of the staging budget was released/);
  });

  it('estimates a row as its values, long texts by their length', () => {
    expect(stagedBytes([{ row: { a: 1, b: null, c: 'short' } }])).toBe(32 + 3 * 16);
    expect(stagedBytes([{ row: { a: 'x'.repeat(100) } }, { row: {} }])).toBe(32 + 16 + 100 + 32);
    // a large batch from every eighth row: alike rows give the same sum as reading them all
    const alike = Array.from({ length: 1000 }, () => ({ row: { a: 1, b: 'y'.repeat(20) } }));
    expect(stagedBytes(alike)).toBe(1000 * (32 + 16 + 16 + 20));
    expect(stagedBytes([])).toBe(0);
  });
});
