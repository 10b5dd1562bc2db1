import type { SpanLoad } from './destination.js';

/** A span's staging that holds a connection until released. */
export interface ReleasableSpanLoad extends SpanLoad {
  /** Drops the staging and gives the connection back. */
  release(): Promise<void>;
}

/** The span load a destination hands out: its connection is released once it commits or aborts, whatever happens. */
export function releasedOnEnd(load: ReleasableSpanLoad): SpanLoad {
  return {
    append: (table, rows) => load.append(table, rows),
    reject: (rows) => load.reject(rows),
    reset: () => load.reset(),
    commit: async (extracted, requests) => {
      try {
        return await load.commit(extracted, requests);
      } finally {
        await load.release();
      }
    },
    abort: async () => {
      try {
        await load.abort();
      } finally {
        await load.release();
      }
    },
  };
}
