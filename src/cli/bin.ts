#!/usr/bin/env node
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

// A backfill allocates a lot and keeps little (a page and a batch per span in flight). By default V8 lets the
// heap grow to several times what is alive before it collects, so the longer a run, the more memory it holds;
// growing it by half of what is alive keeps the peak bounded by the work in flight, not by the range, at the
// cost of a few more (short) collections. The setting is read at every collection, so it applies from here on.
setFlagsFromString('--heap-growing-percent=50');

// V8 grows its young generation well beyond what a backfill's stream of short-lived pages needs, resident memory
// that buys little. Its maximum is fixed when the process starts, but its growth factor is read at each collection,
// so it may grow only while under this size: a lower peak at about the same CPU (docs/performance.md, "Memory").
const YOUNG_GENERATION_BYTES = 16 * 2 ** 20;
let growing = true;
new PerformanceObserver(() => {
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  const grow = young !== undefined && young.space_size < YOUNG_GENERATION_BYTES;
  if (grow === growing) return;
  growing = grow;
  setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`);
}).observe({ entryTypes: ['gc'] });

// DuckDB's allocator (its own jemalloc) keeps pages a query freed for a while before it gives them back, and the
// merges of a backfill free a lot at once, so it gives them back at once to keep the peak down. Read when DuckDB
// loads, so set before anything imports it; a value in the environment wins.
process.env.DUCKDB_JE_MALLOC_CONF ??= 'dirty_decay_ms:0,muzzy_decay_ms:0';

const { main } = await import('./main.js');
// Exit explicitly: idle keep-alive sockets must not hold a scheduler's job open.
process.exit(await main(process.argv));
