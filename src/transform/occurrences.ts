import { contentKey } from './keys.js';

/**
 * Keys for records that have no id: the content key, and for the n-th exact duplicate of the same content
 * (n ≥ 1) a key derived from it and n. Identical records are interchangeable, so the keys of a set of
 * records do not depend on the order they arrive in.
 */
export class OccurrenceKeys {
  private readonly seen = new Map<string, number>();

  /** The key of the next record whose content key is `base`. */
  next(base: string): string {
    const n = this.seen.get(base) ?? 0;
    this.seen.set(base, n + 1);
    return n === 0 ? base : contentKey(base, n);
  }
}
