import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter } from '../../src/source/rate-limiter.js';

/** Start times of `n` callers taking from `limiter` at once, on the fake clock. */
async function starts(limiter: RateLimiter, n: number, runFor = 10_000): Promise<number[]> {
  const at: number[] = [];
  const all = Promise.all(Array.from({ length: n }, () => limiter.take().then(() => at.push(performance.now()))));
  await vi.advanceTimersByTimeAsync(runFor);
  await all;
  return at;
}

/** The most starts in any one-second interval [t, t + 1000). */
function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= 1000) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

describe('RateLimiter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('spaces the starts of concurrent callers so that no second holds more than the limit', async () => {
    const at = await starts(new RateLimiter(4), 10);
    expect(at).toHaveLength(10);
    for (let k = 1; k < at.length; k++) expect(at[k]! - at[k - 1]!).toBeGreaterThanOrEqual(250);
    expect(busiestSecond(at)).toBe(4);
  });

  it('never lets a caller start early, even when its timer fires early', async () => {
    let clock = 0;
    const early = new RateLimiter(2, () => clock, async (ms) => void (clock += ms - 0.5 > 0 ? ms - 0.5 : ms));
    const at: number[] = [];
    for (let n = 0; n < 5; n++) {
      await early.take();
      at.push(clock);
    }
    for (let k = 1; k < at.length; k++) expect(at[k]! - at[k - 1]!).toBeGreaterThanOrEqual(500);
  });

  it('holds every caller after a Retry-After', async () => {
    const limiter = new RateLimiter(100);
    limiter.holdUntil(performance.now() + 3000);
    const at = await starts(limiter, 3);
    expect(Math.min(...at)).toBeGreaterThanOrEqual(3000);
  });
});
