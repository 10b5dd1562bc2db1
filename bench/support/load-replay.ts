import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { createApi } from '../../src/commands/job-session.js';
import type { StreamName } from '../../src/plan/job-plan.js';
import type { ResolvedConfig } from '../../src/config/load-config.js';
import type { Destination, SpanLoad } from '../../src/load/destination.js';
import type { Row, TableSpec } from '../../src/load/table-spec.js';
import { copiedFromParent, rowColumns } from '../../src/load/staging/staging.js';
import { silentLogger } from '../../src/log/logger.js';
import { commitWindows } from '../../src/pipeline/load-span.js';
import { normalizeRecords } from '../../src/pipeline/record-rows.js';
import type { Day } from '../../src/plan/days.js';
import type { Window } from '../../src/plan/windows.js';
import { streamDefinition } from '../../src/streams/registry.js';
import { backfillSpans, benchStreamContext } from './fetch-only.js';
import type { RowSink, StagedRows } from './row-sink.js';

/**
 * The pipeline's loader as a sink: each span is opened, staged batch by batch and committed (merge, ledger,
 * watermark in one transaction) exactly as `loadSpan` does, minus the source.
 */
export class LoaderSink implements RowSink {
  readonly takes = 'staged';
  private load: SpanLoad | undefined;
  private span: Window[] = [];
  private readonly runId = randomUUID();

  constructor(
    readonly name: string,
    private readonly destination: Destination,
    private readonly job: string,
    private readonly stream: StreamName,
    private readonly firstDay: Day,
  ) {}

  async beginSpan(span: Window[], tables: TableSpec[]): Promise<void> {
    this.load = await this.destination.openSpan({
      job: this.job,
      stream: this.stream,
      runId: this.runId,
      windows: span,
      tables,
    });
    this.span = span;
  }

  async append(table: TableSpec, rows: StagedRows): Promise<void> {
    await this.load!.append(table.name, rows);
  }

  async endSpan(extracted: Map<Day, number>): Promise<void> {
    await commitWindows(
      this.load!,
      { job: this.job, stream: this.stream, runId: this.runId, firstDay: this.firstDay },
      this.span,
      extracted,
      0,
    );
    this.load = undefined;
  }

  async finish(): Promise<void> {
    // DuckDB: everything written to the database file, as the raw load is measured
    if (this.destination.name === 'duckdb') await this.destination.withConnection((conn) => conn.run('CHECKPOINT'));
  }

  async close(): Promise<void> {
    // a span left open by a failed replay is aborted by the destination as it closes
    await this.destination.close();
  }
}

/** Rows and seconds one sink took. */
export interface SinkTime {
  sink: string;
  rows: number;
  seconds: number;
}

/** What {@link captureRows} wrote. */
export interface CapturedRows {
  file: string;
  records: number;
  rowsByTable: Record<string, number>;
  seconds: number;
}

type CapturedLine =
  | { span: Window[] }
  | { table: string; rows: Array<{ seq: number; windowStart: Day; row: Row }> }
  | { extracted: Array<[Day, number]> };

/**
 * Reads the spans a backfill of `[from, to]` loads — fetched and normalized like `loadSpan` does, span by span,
 * a batch per page — and writes every batch of rows to `file` (JSON lines), so that loaders can then be timed on
 * exactly these rows, in the same batches, with nothing else running.
 */
export async function captureRows(
  config: ResolvedConfig,
  job: string,
  stream: StreamName,
  from: string,
  to: string,
  file: string,
  customers?: Destination,
): Promise<CapturedRows> {
  const definition = streamDefinition(stream);
  const api = createApi(config, silentLogger);
  const out = createWriteStream(file);
  const write = async (line: CapturedLine) => {
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  };
  const rowsByTable: Record<string, number> = {};
  let records = 0;
  const started = performance.now();
  for (const span of backfillSpans(config, job, stream, from, to)) {
    const ctx = benchStreamContext(config, job, api, span, customers);
    await write({ span });
    const normalize = definition.normalizer(ctx);
    const extracted = new Map<Day, number>();
    let seq = 0;
    for await (const batch of definition.extract(ctx, span)) {
      if (batch.restart) throw new Error('the source changed while it was read; the bench runs without faults');
      // rejected records are not staged rows: the bench counts what the loader writes
      const { rows } = normalizeRecords(normalize, batch.records, batch.windowStart, seq);
      seq += batch.records.length;
      records += batch.records.length;
      extracted.set(batch.windowStart, (extracted.get(batch.windowStart) ?? 0) + batch.records.length);
      for (const [table, list] of rows) {
        for (const [spec, tableRows] of tableRowsOf(definition.tables, table, list))
          rowsByTable[spec.name] = (rowsByTable[spec.name] ?? 0) + tableRows.length;
        await write({ table, rows: list });
      }
    }
    await write({ extracted: [...extracted] });
  }
  out.end();
  await finished(out);
  return { file, records, rowsByTable, seconds: (performance.now() - started) / 1000 };
}

/**
 * The rows of every table that staged rows of `table` stand for: its own, and those of the tables staged with
 * it (spelled out as the loader's SQL derives them). A sink that loads tables as they are gets these.
 */
export function tableRowsOf(
  tables: readonly TableSpec[],
  table: string,
  rows: StagedRows,
): Array<[TableSpec, StagedRows]> {
  const spec = tables.find((t) => t.name === table)!;
  const out: Array<[TableSpec, StagedRows]> = [[spec, rows]];
  for (const derived of tables) {
    const staged = derived.stagedWith;
    if (staged?.table !== table) continue;
    const columns = derived.columns.map((c) => c.name).filter((c) => copiedFromParent(staged, derived, spec, c));
    const pick = (row: Row): Row => Object.fromEntries(columns.map((c) => [c, row[c] ?? null]));
    if (staged.kind === 'copy') {
      out.push([derived, rows.map((r) => ({ ...r, row: pick(r.row) }))]);
      continue;
    }
    if (staged.kind === 'rows') {
      const { carried } = rowColumns(derived, spec);
      const elements: Array<{ seq: number; windowStart: Day; row: Row }> = [];
      for (const { seq, windowStart, row } of rows) {
        const array = JSON.parse(String(row[staged.column] ?? '[]')) as Array<Array<string | number | null>>;
        for (const element of array)
          elements.push({
            seq,
            windowStart,
            row: { ...pick(row), ...Object.fromEntries(carried.map((c, i) => [c.name, element[i] ?? null])) },
          });
      }
      out.push([derived, elements]);
      continue;
    }
    const entries: Array<{ seq: number; windowStart: Day; row: Row }> = [];
    for (const { seq, windowStart, row } of rows) {
      const object = JSON.parse(String(row[staged.column] ?? '{}')) as Record<string, string | null>;
      for (const [name, value] of Object.entries(object))
        entries.push({
          seq,
          windowStart,
          row: { ...pick(row), [staged.nameColumn]: name, [staged.valueColumn]: value },
        });
    }
    out.push([derived, entries]);
  }
  return out;
}

/**
 * Hands the captured rows to each sink in turn, batch by batch as the pipeline staged them, timing only the
 * sinks' own calls: every sink gets the same rows in the same batches (a sink that `takes` tables gets each
 * table's rows, spelled out before its timing starts), and the times compare the loaders alone. Rows are
 * counted as the warehouse's tables hold them, for every sink.
 */
export async function replayLoads(captured: CapturedRows, tables: TableSpec[], sinks: RowSink[]): Promise<SinkTime[]> {
  const times = sinks.map((s) => ({ sink: s.name, rows: 0, seconds: 0 }));
  const timed = async (i: number, call: () => Promise<void>) => {
    const t = performance.now();
    await call();
    times[i]!.seconds += (performance.now() - t) / 1000;
  };
  const specs = new Map(tables.map((t) => [t.name, t]));
  const lines = createInterface({ input: createReadStream(captured.file), crlfDelay: Infinity });
  for await (const text of lines) {
    const line = JSON.parse(text) as CapturedLine;
    for (let i = 0; i < sinks.length; i++) {
      const sink = sinks[i]!;
      if ('span' in line) await timed(i, () => sink.beginSpan(line.span, tables));
      else if ('table' in line) {
        const tableRows = tableRowsOf(tables, line.table, line.rows);
        times[i]!.rows += tableRows.reduce((n, [, rows]) => n + rows.length, 0);
        if (sink.takes === 'staged') await timed(i, () => sink.append(specs.get(line.table)!, line.rows));
        else for (const [spec, rows] of tableRows) await timed(i, () => sink.append(spec, rows));
      } else await timed(i, () => sink.endSpan(new Map(line.extracted)));
    }
  }
  for (let i = 0; i < sinks.length; i++) await timed(i, () => sinks[i]!.finish());
  return times;
}
