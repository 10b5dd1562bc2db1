/** Rows as a plain-text table with aligned columns (numbers to the right). */
export function formatTable(rows: Array<Record<string, string | number>>): string {
  if (rows.length === 0) return '(no rows)';
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cell = (value: string | number | undefined) =>
    value === undefined ? '' : typeof value === 'number' ? formatNumber(value) : value;
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((row) => cell(row[c]).length)));
  const line = (values: string[], numeric: boolean[]) =>
    values.map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ');
  const numeric = columns.map((c) => rows.every((row) => typeof row[c] !== 'string'));
  return [
    line(columns, numeric),
    line(
      widths.map((w) => '-'.repeat(w)),
      numeric,
    ),
    ...rows.map((row) =>
      line(
        columns.map((c) => cell(row[c])),
        numeric,
      ),
    ),
  ].join('\n');
}

function formatNumber(value: number): string {
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumFractionDigits: Math.abs(value) < 10 ? 3 : 1 });
}
