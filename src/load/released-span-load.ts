import type { SpanLoad } from './destination.js';

/** A span's staging that holds a connection until released. */
export interface ReleasableSpanLoad extends SpanLoad {
  /** Drops the staging and gives the connection back. */
  release(): Promise<void>;
}

/**
 * The span load a destination hands out: its connection is released once it commits or aborts, whatever happens,
 * and only once (an abort after a failed commit has nothing left to do).
 */
export function releasedOnEnd(load: ReleasableSpanLoad): SpanLoad {
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await load.release();
  };
  return {
    append: (table, rows) => load.append(table, rows),
    reject: (rows) => load.reject(rows),
    reset: (windowStart) => load.reset(windowStart),
    commit: async (extracted, requests, windows) => {
      try {
        return await load.commit(extracted, requests, windows);
      } finally {
        await release();
      }
    },
    abort: async () => {
      if (released) return;
      try {
        await load.abort();
      } finally {
        await release();
      }
    },
  };
}
