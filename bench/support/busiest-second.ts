/** The most of `times` (ms) in any one-second interval [t, t + 1000). */
export function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= 1000) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

/**
 * The shortest time (ms) `n` consecutive `times` span: above 1000 when no second holds `n` of them. Where
 * {@link busiestSecond} says whether a limit held, this says by how much.
 */
export function closestSpan(times: number[], n: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let closest = Number.POSITIVE_INFINITY;
  for (let i = 0; i + n - 1 < sorted.length; i++) closest = Math.min(closest, sorted[i + n - 1]! - sorted[i]!);
  return closest;
}
