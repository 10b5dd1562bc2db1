import type { Row } from '../load/table-spec.js';
import type { Day } from '../plan/days.js';

/** A normalizer as a stream makes it: one raw record of a window in, its rows per table out. */
type Normalize = (raw: unknown, windowStart: Day) => Record<string, Row[]>;

/**
 * The normalizers of one span, one per window, each made on its window's first record. A normalizer may count
 * across records (occurrence numbers of exact duplicates); counting per window gives the keys a span of that one
 * window gives, however windows are grouped into spans, and a window read again starts its count afresh without
 * touching the counts of the span's other windows.
 *
 * @example
 * const normalizers = new WindowNormalizers(() => stream.normalizer(ctx));
 * normalizers.normalize(raw, '2024-05-01'); // counted with 2024-05-01's other records only
 * normalizers.forget('2024-05-01'); // the window is read again: its next record starts a new count
 */
export class WindowNormalizers {
  private readonly byWindow = new Map<Day, Normalize>();

  constructor(private readonly make: () => Normalize) {}

  /** Normalizes a record of the window `windowStart` with that window's normalizer. */
  readonly normalize: Normalize = (raw, windowStart) => {
    let normalize = this.byWindow.get(windowStart);
    if (!normalize) this.byWindow.set(windowStart, (normalize = this.make()));
    return normalize(raw, windowStart);
  };

  /** Drops the window's normalizer: the window is read again, or was read to its end (its counts are done with). */
  forget(windowStart: Day): void {
    this.byWindow.delete(windowStart);
  }
}
