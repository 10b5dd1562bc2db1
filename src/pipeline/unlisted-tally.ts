import type { Row, TableSpec } from '../load/table-spec.js';
import type { Day } from '../plan/days.js';
import type { UnlistedSighting } from '../state/unlisted-fields.js';
import { UNLISTED, unlistedPaths } from '../transform/unlisted.js';

/**
 * The unlisted members a span's rows carry, counted per window (a window read again starts its count afresh), for
 * `_etl_unlisted_fields`. Only tables that declare a `recordType` keep unlisted members.
 */
export class UnlistedTally {
  private readonly recordTypes: Map<string, string>;
  private readonly byWindow = new Map<Day, Map<string, UnlistedSighting>>();

  constructor(tables: readonly TableSpec[]) {
    this.recordTypes = new Map(
      tables.flatMap((t) => (t.recordType === undefined ? [] : [[t.name, t.recordType] as const])),
    );
  }

  /** Counts the unlisted members of `rows`, rows of `table` staged for the window `windowStart`. */
  add(table: string, rows: ReadonlyArray<{ row: Row }>, windowStart: Day): void {
    const recordType = this.recordTypes.get(table);
    if (recordType === undefined) return;
    let counts = this.byWindow.get(windowStart);
    for (const { row } of rows) {
      for (const path of unlistedPaths(row[UNLISTED])) {
        if (!counts) this.byWindow.set(windowStart, (counts = new Map()));
        const key = `${recordType}\u0000${path}`;
        const sighting = counts.get(key);
        if (sighting) sighting.records++;
        else counts.set(key, { recordType, path, table, records: 1 });
      }
    }
  }

  /** Forgets what was counted for a window being read again. */
  forget(windowStart: Day): void {
    this.byWindow.delete(windowStart);
  }

  /** What the windows `starts` saw, summed. */
  sightings(starts: readonly Day[]): UnlistedSighting[] {
    const sum = new Map<string, UnlistedSighting>();
    for (const start of starts) {
      for (const [key, s] of this.byWindow.get(start) ?? []) {
        const total = sum.get(key);
        if (total) total.records += s.records;
        else sum.set(key, { ...s });
      }
    }
    return [...sum.values()];
  }
}
