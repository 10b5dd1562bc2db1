import type { DuckDBConnection } from '@duckdb/node-api';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { analystNote, analystType } from '../derived/personal-data.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import { duckdbDialect } from '../warehouse/warehouse-dialect.js';

/**
 * Adds to the description of each view column of the attached copy `db` that reads a withheld column what it holds
 * there (a hash as text, or NULL), as the copy's tables say of theirs: the view's column reads the table's.
 */
export async function describeWithheldViewColumns(
  conn: DuckDBConnection,
  db: string,
  policy: AnalystsPolicy,
): Promise<void> {
  const columns = (
    await conn.runAndReadAll(
      `SELECT c.schema_name, c.table_name, c.column_name, c.comment FROM duckdb_columns() c
         JOIN duckdb_views() v ON v.database_name = c.database_name AND v.schema_name = c.schema_name AND v.view_name = c.table_name
        WHERE c.database_name = ${quoteLiteral(db)} AND NOT v.internal AND c.comment IS NOT NULL`,
    )
  ).getRowObjectsJson() as Array<{ schema_name: string; table_name: string; column_name: string; comment: string }>;
  for (const c of columns) {
    const note = analystNote(policy, c.table_name, c.column_name);
    if (note === '' || c.comment.endsWith(note)) continue;
    await conn.run(
      `COMMENT ON COLUMN ${quoteIdent(db)}.${qualified(c.schema_name, c.table_name)}.${quoteIdent(c.column_name)} IS ${duckdbDialect.commentLiteral(c.comment + note)}`,
    );
  }
}

/**
 * Makes again, in the attached copy `db`, each view with a column that reads a hashed one, so that its column types
 * are what it returns there (a hash is text; DuckDB keeps the types a view had when it was made), its comments kept.
 */
export async function rebindHashedViews(conn: DuckDBConnection, db: string, policy: AnalystsPolicy): Promise<void> {
  if (policy.personalData !== 'hash') return;
  const rows = async <T>(sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson() as unknown as T[];
  const at = `database_name = ${quoteLiteral(db)}`;
  const views = await rows<{ schema_name: string; view_name: string; sql: string; comment: string | null }>(
    `SELECT schema_name, view_name, sql, comment FROM duckdb_views() WHERE ${at} AND NOT internal AND NOT temporary ORDER BY 1, 2`,
  );
  for (const v of views) {
    const where = `${at} AND schema_name = ${quoteLiteral(v.schema_name)} AND table_name = ${quoteLiteral(v.view_name)}`;
    const columns = await rows<{ column_name: string; data_type: string; comment: string | null }>(
      `SELECT column_name, data_type, comment FROM duckdb_columns() WHERE ${where} ORDER BY column_index`,
    );
    if (!columns.some((c) => analystType(policy, v.view_name, c.column_name, c.data_type, 'VARCHAR') !== c.data_type))
      continue;
    const target = `${quoteIdent(db)}.${qualified(v.schema_name, v.view_name)}`;
    await conn.run(`DROP VIEW ${target}`);
    // the statement names the view alone: made in the copy's schema of that name
    await conn.run(`USE ${quoteIdent(db)}.${quoteIdent(v.schema_name)}`);
    try {
      await conn.run(v.sql);
    } finally {
      await conn.run('USE memory');
    }
    if (v.comment !== null) await conn.run(`COMMENT ON VIEW ${target} IS ${duckdbDialect.commentLiteral(v.comment)}`);
    for (const c of columns)
      if (c.comment !== null)
        await conn.run(
          `COMMENT ON COLUMN ${target}.${quoteIdent(c.column_name)} IS ${duckdbDialect.commentLiteral(c.comment)}`,
        );
  }
}
