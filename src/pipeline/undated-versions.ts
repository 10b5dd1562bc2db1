import type { Row, TableSpec } from '../load/table-spec.js';
import type { Logger } from '../log/logger.js';
import type { Day } from '../plan/days.js';

/**
 * The records of a span whose history versions cannot be dated by the source: a table whose history starts no version
 * before a day the record names (`history.notBefore`, the account's `profileSet`) got a row without that day (the
 * service sent none, or one that cannot be read). Such a version starts at its window, the only evidence left: exact
 * under an export that lists each change as of its window, too early under one that serves current profiles for past
 * windows. The pipeline cannot tell which, so it says so, window by window.
 */
export class UndatedVersions {
  private readonly byWindow = new Map<Day, { records: number; first: string }>();

  constructor(private readonly tables: readonly TableSpec[]) {}

  /** Counts the rows of `table` staged for `windowStart` that name no day their version may start from. */
  add(table: string, rows: ReadonlyArray<{ row: Row }>, windowStart: Day): void {
    const spec = this.tables.find((t) => t.name === table);
    const column = spec?.history?.notBefore;
    if (!spec || column === undefined) return;
    for (const { row } of rows) {
      if (row[column] !== null && row[column] !== undefined) continue;
      const seen = this.byWindow.get(windowStart);
      const key = spec.key.map((k) => String(row[k])).join('|');
      this.byWindow.set(windowStart, { records: (seen?.records ?? 0) + 1, first: seen?.first ?? key });
    }
  }

  /** Forgets a window read again: its rows are staged anew. */
  forget(windowStart: Day): void {
    this.byWindow.delete(windowStart);
  }

  /** Says, for each window, how many versions start there because the source did not say when it set them. */
  warn(stream: string, logger: Logger): void {
    for (const [window, { records, first }] of [...this.byWindow].sort(([a], [b]) => a.localeCompare(b)))
      logger.warn(
        { stream, window, records, first },
        `${stream} ${window}: ${records} record(s) served without a readable profileSet (first: ${first}); their versions in the history start at the window, as the source cannot say when it set them (too early if the export serves current profiles for past windows; docs/history.md)`,
      );
  }
}
