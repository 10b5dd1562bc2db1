import type { SpanLoad } from './destination.js';

/** A span's staging that holds a connection until released. */
export interface ReleasableSpanLoad extends SpanLoad {
  /** Drops the staging and gives the connection back. */
  release(): Promise<void>;
}

/**
 * The span load a destination hands out: its connection is released once it commits or aborts, whatever happens,
 * and only once (an abort after a failed commit has nothing left to do); `onReleased` is told when it is.
 */
function releasedOnEnd(load: ReleasableSpanLoad, onReleased?: () => void): SpanLoad {
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    try {
      await load.release();
    } finally {
      onReleased?.();
    }
  };
  return {
    append: (table, rows) => load.append(table, rows),
    reject: (rows) => load.reject(rows),
    rejectFields: (rows) => load.rejectFields(rows),
    reset: (windowStart) => load.reset(windowStart),
    keepRejects: (windows) => load.keepRejects(windows),
    commit: async (windows, work) => {
      try {
        return await load.commit(windows, work);
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

/**
 * The spans a destination has handed out and not yet seen end, so that closing the destination gives their
 * connections back first: a PostgreSQL pool waits for every client before it ends, and would wait for ever.
 */
export class OpenSpans {
  private readonly open = new Set<SpanLoad>();

  /** The span load to hand out for `load`, tracked until it commits or aborts. */
  track(load: ReleasableSpanLoad): SpanLoad {
    const span: SpanLoad = releasedOnEnd(load, () => this.open.delete(span));
    this.open.add(span);
    return span;
  }

  /** Aborts every span still open (their staged rows are dropped, nothing is loaded). */
  async abortAll(): Promise<void> {
    for (const span of [...this.open]) await span.abort().catch(() => undefined);
  }
}
