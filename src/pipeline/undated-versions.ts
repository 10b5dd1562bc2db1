import type { Row, TableSpec } from '../load/table-spec.js';
import type { Logger } from '../log/logger.js';
import type { Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';

/** Records of one window, and the key of the first of them. */
interface Tally {
  records: number;
  first: string;
}

/**
 * What the source cannot tell of a span's history versions, window by window. A table whose history starts no version
 * before a day the record names (`history.notBefore`, the account's `profileSet`) may get:
 * - a row without that day (the service sent none, or one that cannot be read): its version starts at its window,
 *   the only evidence left, which is too early if the export serves current profiles for past windows;
 * - a row whose day is after its window: the export served a profile set later (current profiles for past windows),
 *   so what the customer looked like from the window until that day is not known; the version starts at its day.
 * The pipeline says both, so that neither reads as a history known whole.
 */
export class UndatedVersions {
  private readonly undated = new Map<Day, Tally>();
  private readonly later = new Map<Day, Tally>();

  constructor(
    private readonly tables: readonly TableSpec[],
    private readonly span: readonly Window[],
  ) {}

  /** Counts the rows of `table` staged for `windowStart` that name no day, or a day after the window. */
  add(table: string, rows: ReadonlyArray<{ row: Row }>, windowStart: Day): void {
    const spec = this.tables.find((t) => t.name === table);
    const column = spec?.history?.notBefore;
    if (!spec || column === undefined) return;
    const end = this.span.find((w) => w.start === windowStart)?.end ?? windowStart;
    for (const { row } of rows) {
      const day = row[column];
      const tally = day === null || day === undefined ? this.undated : String(day) > end ? this.later : undefined;
      if (!tally) continue;
      const seen = tally.get(windowStart);
      const key = spec.key.map((k) => String(row[k])).join('|');
      tally.set(windowStart, { records: (seen?.records ?? 0) + 1, first: seen?.first ?? key });
    }
  }

  /** Forgets a window read again: its rows are staged anew. */
  forget(windowStart: Day): void {
    this.undated.delete(windowStart);
    this.later.delete(windowStart);
  }

  /** Says, for each window, what of its versions the source cannot date. */
  warn(stream: string, logger: Logger): void {
    for (const [window, { records, first }] of sorted(this.undated))
      logger.warn(
        { stream, window, records, first },
        `${stream} ${window}: ${records} record(s) served without a readable profileSet (first: ${first}); their versions in the history start at the window, as the source cannot say when it set them (too early if the export serves current profiles for past windows; docs/history.md)`,
      );
    for (const [window, { records, first }] of sorted(this.later))
      logger.warn(
        { stream, window, records, first, setAfterWindow: true },
        `${stream} ${window}: ${records} record(s) served with a profileSet after the window (first: ${first}): the export serves current profiles for past windows, so what those customers looked like from the window until then is not known; their versions start at their profileSet day (docs/history.md)`,
      );
  }
}

function sorted(tallies: ReadonlyMap<Day, Tally>): Array<[Day, Tally]> {
  return [...tallies].sort(([a], [b]) => a.localeCompare(b));
}
