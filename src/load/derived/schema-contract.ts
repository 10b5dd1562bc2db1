import type { SchemaContract } from '../../plan/job-plan.js';
import { qualified } from '../warehouse/identifiers.js';
import { SchemaContractRefusal } from '../warehouse/warehouse-errors.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import type { ViewStamp } from './replace-view.js';

/** The record of every change of what analysts read (`sql/<dialect>/016_schema_changes.sql`). */
export const SCHEMA_CHANGES_TABLE = '_etl_schema_changes';

/**
 * What a row of `_etl_schema_changes` says happened. Columns and views are only ever added; a published column keeps
 * its name and type, so its values that no longer fit are said (`values_no_longer_fit`, `values_fit_again`) and, under
 * `evolve`, given a column of their own (`type_column_added`). A column made before it had any value (a question nobody
 * answered yet) takes the type of its first values (`column_typed`). The last three are what no commit of loyalty-etl
 * makes, recorded should anything else do it.
 */
export type SchemaChangeKind =
  | 'view_added'
  | 'column_added'
  | 'column_typed'
  | 'values_no_longer_fit'
  | 'values_fit_again'
  | 'type_column_added'
  | 'column_retyped'
  | 'column_retired'
  | 'view_retired';

/** One change of a table or view analysts read. */
export interface SchemaChange {
  object: string;
  /** NULL for a change of a whole view. */
  column: string | null;
  change: SchemaChangeKind;
  from: string | null;
  to: string | null;
  /** The question code or custom field the column holds, where it holds one. */
  sourceKey: string | null;
  reason: string;
  /** How many values the change concerns (the values now NULL, or those the new column holds). */
  values: number | null;
}

/** What a change found by comparing the schema before and after a commit is about, said by the code that made it. */
export type ChangeNote = Partial<Pick<SchemaChange, 'change' | 'from' | 'sourceKey' | 'values'>> & { reason: string };

/** Object → column → type (lower case, one word per type: `text`, `integer`, `double`, `date`, …), in column order. */
export type PublishedSchema = Map<string, Map<string, string>>;

/**
 * The tables and views analysts read, with their columns and types, as the warehouse's catalog has them now: every
 * relation of the schema but the pipeline's own (`_etl_*`). The published DuckDB copy, PostgreSQL's analysts' schema
 * and the dbt sources are made from them, so what holds here holds there.
 */
export async function readPublishedSchema(conn: SqlConnection, schema: string): Promise<PublishedSchema> {
  const rows = await conn.all<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT table_name, column_name, data_type FROM information_schema.columns
      WHERE table_catalog = current_database() AND table_schema = $1 AND SUBSTR(table_name, 1, 5) <> '_etl_'
      ORDER BY table_name, ordinal_position`,
    [schema],
  );
  const out: PublishedSchema = new Map();
  for (const r of rows) {
    if (!out.has(r.table_name)) out.set(r.table_name, new Map());
    out.get(r.table_name)!.set(r.column_name, typeWord(r.data_type));
  }
  return out;
}

/** One spelling of a type for both warehouses: DuckDB's `VARCHAR` and PostgreSQL's `text` are `text`. */
export function typeWord(dataType: string): string {
  const t = dataType.toLowerCase();
  if (t === 'varchar' || t === 'character varying') return 'text';
  if (t === 'double precision') return 'double';
  if (t === 'timestamp with time zone') return 'timestamptz';
  return t;
}

/**
 * The schema changes of one commit, in its transaction: begun before its merge (the schema as analysts read it),
 * finished after its derived objects are made. The changes found by comparing the schema before and after are
 * recorded with the notes the code that made them left; the changes no comparison can see (values no longer fitting a
 * kept column) are recorded as they are said. Under `freeze`, a value that no longer fits fails the commit.
 */
export class SchemaChangeLog {
  private readonly notes = new Map<string, ChangeNote>();
  private readonly said: SchemaChange[] = [];

  private constructor(
    readonly contract: SchemaContract,
    readonly before: PublishedSchema,
    private readonly fitState: ReadonlyMap<string, string>,
  ) {}

  static async begin(conn: SqlConnection, schema: string, contract: SchemaContract): Promise<SchemaChangeLog> {
    const before = await readPublishedSchema(conn, schema);
    const fitState = new Map<string, string>();
    for (const r of await conn.all<{ object_name: string; column_name: string; change: string; to_type: string }>(
      `SELECT object_name, column_name, change, to_type FROM ${qualified(schema, SCHEMA_CHANGES_TABLE)}
        WHERE change IN ('values_no_longer_fit', 'values_fit_again') ORDER BY changed_at`,
    ))
      fitState.set(key(r.object_name, r.column_name), r.change === 'values_no_longer_fit' ? r.to_type : '');
    return new SchemaChangeLog(contract, before, fitState);
  }

  /** The type `column` of `object` had before the commit, if it was published. */
  publishedType(object: string, column: string): string | undefined {
    return this.before.get(object)?.get(column);
  }

  /** Why a column (or, with `column` null, a view) the comparison will find was added or changed. */
  note(object: string, column: string | null, note: ChangeNote): void {
    this.notes.set(key(object, column), note);
  }

  /**
   * Says that the values of a published column now read as `evidence`, not as its type `published`: once when they
   * stop fitting (how many are NULL), once when they fit again; nothing while the state stays. Under `freeze` the
   * first throws, and the commit rolls back.
   */
  async valuesRead(
    object: string,
    column: string,
    published: string,
    evidence: string,
    at: { sourceKey: string; reason: string; count: () => Promise<number> },
  ): Promise<void> {
    const state = this.fitState.get(key(object, column)) ?? '';
    // text holds every value: a text column's values never stop fitting it
    const fits = evidence === published || published === 'text';
    if (fits ? state === '' : state === evidence) return;
    const values = await at.count();
    if (!fits && this.contract === 'freeze')
      throw new SchemaContractRefusal(
        `schema contract freeze: ${values} value(s) of ${object}.${column} (${published}) now read as ${evidence} (${at.reason}); ` +
          `the commit is refused: set destination.analysts.schema_contract to evolve or discard_value to accept them`,
      );
    this.said.push({
      object,
      column,
      change: fits ? 'values_fit_again' : 'values_no_longer_fit',
      from: published,
      to: evidence,
      sourceKey: at.sourceKey,
      reason: fits
        ? `its values fit ${published} again (${at.reason})`
        : `its values now read as ${evidence}: ${values} are NULL here (${at.reason})`,
      values,
    });
  }

  /** Compares the schema now with the schema before, and records every change in `_etl_schema_changes`. */
  async finish(conn: SqlConnection, schema: string, stamp: ViewStamp): Promise<SchemaChange[]> {
    const after = await readPublishedSchema(conn, schema);
    const changes = [...compare(this.before, after, (o, c) => this.notes.get(key(o, c))), ...this.said];
    for (const c of changes)
      await conn.run(
        `INSERT INTO ${qualified(schema, SCHEMA_CHANGES_TABLE)} (changed_at, run_id, object_name, column_name, change, from_type, to_type, source_key, reason, value_count)
         VALUES (CAST($1 AS TIMESTAMPTZ), $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [stamp.now, stamp.runId, c.object, c.column, c.change, c.from, c.to, c.sourceKey, c.reason, c.values],
      );
    return changes;
  }
}

function key(object: string, column: string | null): string {
  return `${object}\u0000${column ?? ''}`;
}

/** Every difference of `after` from `before`: views and columns added, retyped and retired. */
function compare(
  before: PublishedSchema,
  after: PublishedSchema,
  noteOf: (object: string, column: string | null) => ChangeNote | undefined,
): SchemaChange[] {
  const out: SchemaChange[] = [];
  const of = (
    object: string,
    column: string | null,
    change: SchemaChangeKind,
    from: string | null,
    to: string | null,
    reason: string,
  ): SchemaChange => {
    const note = noteOf(object, column);
    return {
      object,
      column,
      change: note?.change ?? change,
      from: note?.from ?? from,
      to,
      sourceKey: note?.sourceKey ?? null,
      reason: note?.reason ?? reason,
      values: note?.values ?? null,
    };
  };
  for (const [object, columns] of after) {
    const old = before.get(object);
    if (!old) {
      out.push(of(object, null, 'view_added', null, null, `made with ${columns.size} columns`));
      continue;
    }
    for (const [column, type] of columns) {
      const was = old.get(column);
      if (was === undefined) out.push(of(object, column, 'column_added', null, type, 'added'));
      else if (was !== type) out.push(of(object, column, 'column_retyped', was, type, 'retyped'));
    }
    for (const [column, type] of old)
      if (!columns.has(column)) out.push(of(object, column, 'column_retired', type, null, 'no longer made'));
  }
  for (const object of before.keys())
    if (!after.has(object)) out.push(of(object, null, 'view_retired', null, null, 'no longer made'));
  return out;
}
