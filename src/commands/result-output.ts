import { stringify } from 'csv-stringify/sync';
import type { StatementResult } from '../load/warehouse/warehouse-reader.js';
import { table } from './table.js';

/** How `sql` prints a result: a text table for people, CSV or JSON for programs. */
export type OutputFormat = 'table' | 'csv' | 'json';

/** Where results go: stdout, or a prompt's output. */
export interface Output {
  write(text: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/** Writes, waiting when the stream asks to (a large CSV piped to a slow reader). */
async function put(out: Output, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', resolve));
}

/** A cell as the table shows it: NULL spelled out, nested values as JSON, line breaks escaped. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('\r', '\\r').replaceAll('\t', '\\t');
}

const CSV_CAST = { boolean: (v: boolean) => String(v), object: (v: object) => JSON.stringify(v) };

/**
 * Writes one statement's result in `format`. CSV and JSON stream every row (a header line, or one array of
 * objects); the table shows at most `maxRows` and says when there were more, since it must hold what it shows.
 * Returns the rows written.
 */
export async function writeResult(
  result: StatementResult,
  format: OutputFormat,
  out: Output,
  options: { maxRows: number },
): Promise<number> {
  if (!result.rows) {
    if (format === 'table') await put(out, 'ok\n');
    return 0;
  }
  const { columns } = result;
  let count = 0;
  if (format === 'csv') {
    await put(out, stringify([columns]));
    for await (const batch of result.rows) {
      count += batch.length;
      await put(out, stringify(batch, { cast: CSV_CAST }));
    }
    return count;
  }
  if (format === 'json') {
    await put(out, '[');
    for await (const batch of result.rows) {
      let text = '';
      for (const row of batch)
        text += `${count++ === 0 ? '\n' : ',\n'}${JSON.stringify(Object.fromEntries(columns.map((c, i) => [c, row[i] ?? null])))}`;
      await put(out, text);
    }
    await put(out, count === 0 ? ']\n' : '\n]\n');
    return count;
  }
  const shown: string[][] = [];
  let more = false;
  for await (const batch of result.rows) {
    for (const row of batch) {
      if (shown.length === options.maxRows) {
        more = true;
        break;
      }
      shown.push(row.map(cellText));
    }
    if (more) break;
  }
  const footer = more
    ? `(the first ${shown.length} rows; there are more: add LIMIT, raise --max-rows, or use --csv or --json for every row)`
    : `(${shown.length} row${shown.length === 1 ? '' : 's'})`;
  await put(out, `${table(columns, shown)}\n${footer}\n`);
  return shown.length;
}
