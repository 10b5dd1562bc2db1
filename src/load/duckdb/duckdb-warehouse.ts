import { existsSync } from 'node:fs';
import type { DuckdbSettings } from '../../plan/job-plan.js';
import { openWhenFree } from '../open-when-free.js';
import { readyDestination } from '../ready-destination.js';
import { pipelineNote, type ReaderOptions, type WarehouseEntry } from '../warehouse-entry.js';
import { DuckDbDestination } from './duckdb-destination.js';
import { openDuckDbExportSource } from './duckdb-export-source.js';
import { DuckDbReader } from './duckdb-reader.js';

/** DuckDB's entry in the registry of warehouses: a file, one writing process, a published copy for readers. */
export function duckDbWarehouse(settings: DuckdbSettings): WarehouseEntry {
  const open = async ({ create = true }: { create?: boolean } = {}) =>
    readyDestination(
      await DuckDbDestination.open(
        settings.path,
        settings.schema,
        {
          memoryLimit: settings.memory_limit,
          checkpointThreshold: settings.checkpoint_threshold,
          threads: settings.threads,
          stagingMemory: settings.staging_memory,
        },
        { create },
      ),
      settings.schema,
      { create },
    );
  return {
    name: 'duckdb',
    publishesCopy: true,
    missingFile: () => (existsSync(settings.path) ? undefined : settings.path),
    open,
    openWhenFree: (wait) => openWhenFree(() => open(), wait),
    openReader: (options) => openReader(settings, options),
    async openExportSource() {
      const source = await openDuckDbExportSource(settings.path, settings.schema ?? 'main');
      return { ...source, close: async () => source.close() };
    },
    checks: async () => [],
    analystsRead: () => ({ schema: settings.schema, words: 'the published DuckDB copy' }),
  };
}

/**
 * The published copy when there is one; else, after saying so, the warehouse file itself, read-only (and that file,
 * said first, for the pipeline's own tables).
 */
async function openReader(
  settings: DuckdbSettings,
  { say, publishedCopy, pipeline }: ReaderOptions,
): Promise<DuckDbReader> {
  if (pipeline) {
    say(pipelineNote(`file ${settings.path}`, true));
    return DuckDbReader.open(settings.path, settings.schema);
  }
  if (publishedCopy === undefined) return DuckDbReader.open(settings.path, settings.schema);
  if (publishedCopy !== false && existsSync(publishedCopy)) return DuckDbReader.open(publishedCopy, settings.schema);
  say(
    `note: ${publishedCopy === false ? 'publishing is off (destination.publish_path: false)' : `no copy is published at ${publishedCopy} yet (a run or \`loyalty-etl publish\` makes one)`}; ` +
      `reading the warehouse file ${settings.path} itself: while this session is open, runs wait for it`,
  );
  return DuckDbReader.open(settings.path, settings.schema);
}
