import { busiestSecond } from '../../bench/support/busiest-second.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RATE_SLACK_MS, RateLimiter } from '../../src/source/rate-limiter.js';

/** Start times of `n` callers taking from `limiter` at once, on the fake clock. */
async function starts(limiter: RateLimiter, n: number, runFor = 10_000): Promise<number[]> {
  const at: number[] = [];
  const all = Promise.all(Array.from({ length: n }, () => limiter.take().then(() => at.push(performance.now()))));
  await vi.advanceTimersByTimeAsync(runFor);
  await all;
  return at;
}

describe('RateLimiter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets no more than the limit start in any second, serving concurrent callers in order', async () => {
    const at = await starts(new RateLimiter(4), 10);
    expect(at).toHaveLength(10);
    expect(busiestSecond(at)).toBe(4);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(at.at(-1)).toBeLessThanOrEqual(2 * (1000 + RATE_SLACK_MS)); // and no slower than that
  });

  it('never lets a caller start early, even when its timer fires early', async () => {
    let clock = 0;
    const early = new RateLimiter(
      2,
      () => clock,
      async (ms) => void (clock += ms - 0.5),
    );
    const at: number[] = [];
    for (let n = 0; n < 7; n++) {
      await early.take();
      at.push(clock);
    }
    expect(busiestSecond(at)).toBe(2);
  });

  it('turns a rate below one per second into one start per so many seconds', async () => {
    const at = await starts(new RateLimiter(0.5), 3, 10_000);
    expect(at).toEqual([0, 1, 2].map((n) => at[0]! + n * (2000 + RATE_SLACK_MS)));
  });

  it('counts a start from when its request leaves, when that is later than the grant', async () => {
    let clock = 0;
    const limiter = new RateLimiter(
      2,
      () => clock,
      async (ms) => void (clock += ms),
    );
    const first = await limiter.take();
    clock = 300; // the first request was held up before it left
    first.sent();
    await limiter.take();
    await limiter.take();
    expect(clock).toBe(300 + 1000 + RATE_SLACK_MS);
  });

  it('changes its rate while in use without ever letting more through than either rate', async () => {
    const limiter = new RateLimiter(10);
    const at: number[] = [];
    const take = (n: number) => Array.from({ length: n }, () => limiter.take().then(() => at.push(performance.now())));
    const first = take(10);
    await vi.advanceTimersByTimeAsync(100);
    limiter.setRate(4); // two more workers joined
    const after = take(12);
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all([...first, ...after]);
    expect(busiestSecond(at)).toBe(10);
    expect(busiestSecond(at.slice(10))).toBe(4);
    limiter.setRate(8); // they left
    const later = performance.now();
    const raised = Promise.all(take(16));
    await vi.advanceTimersByTimeAsync(10_000);
    await raised;
    expect(busiestSecond(at.filter((t) => t >= later))).toBe(8);
  });

  it('holds every caller after a Retry-After', async () => {
    const limiter = new RateLimiter(100);
    limiter.holdUntil(performance.now() + 3000);
    const at = await starts(limiter, 3);
    expect(Math.min(...at)).toBeGreaterThanOrEqual(3000);
  });
});
