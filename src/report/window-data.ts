import { dayNumber, type Day } from '../plan/days.js';
import type { ReportModel, ReportWindow } from './report-model.js';

/**
 * The windows of one stream as columns, for the page's script to show a window's details on hover: one array per
 * field, a window per index, in the order of the calendar's cells. Columns keep the page small for years of
 * windows: a window costs some 40 bytes here, where an object per window would cost three times that.
 */
export interface EncodedWindows {
  stream: string;
  /** Days from the stream's first window start to each window's start. */
  o: number[];
  /** Each window's length in days. */
  n: number[];
  /** One status letter per window: `d` done, `f` failed, `p` pending, `m` never loaded. */
  s: string;
  /** Records read, loaded, rejected; source requests. */
  x: number[];
  l: number[];
  r: number[];
  q: number[];
  /** When the window's last load ended (`YYYY-MM-DD HH:MM`), or ''. */
  t: string[];
  /** Index of the window's error in {@link WindowData.errors}, or -1. */
  e: number[];
  /** Index of the window's run in {@link WindowData.runs}, or -1. */
  u: number[];
  /** The first window's start. */
  base: Day;
}

/** Every stream's windows, with the texts they share stored once (a source down for a week fails alike). */
export interface WindowData {
  streams: EncodedWindows[];
  errors: string[];
  runs: string[];
}

const STATUS_LETTER: Record<ReportWindow['status'], string> = { done: 'd', failed: 'f', pending: 'p', missing: 'm' };

/** Encodes every stream's windows of `model` for the page's data block. */
export function encodeWindowData(model: Pick<ReportModel, 'streams'>): WindowData {
  const errors = new Interner();
  const runs = new Interner();
  const streams = model.streams.map((stream): EncodedWindows => {
    const base = stream.windows[0]?.start ?? '1970-01-01';
    const baseNumber = dayNumber(base);
    const out: EncodedWindows = {
      stream: stream.stream,
      base,
      o: [],
      n: [],
      s: '',
      x: [],
      l: [],
      r: [],
      q: [],
      t: [],
      e: [],
      u: [],
    };
    for (const w of stream.windows) {
      const start = dayNumber(w.start);
      out.o.push(start - baseNumber);
      out.n.push(dayNumber(w.end) - start + 1);
      out.s += STATUS_LETTER[w.status];
      out.x.push(w.extracted);
      out.l.push(w.loaded);
      out.r.push(w.rejected);
      out.q.push(w.requests);
      out.t.push(w.finishedAt ? w.finishedAt.slice(0, 16) : '');
      out.e.push(w.error === null ? -1 : errors.index(w.error));
      out.u.push(w.runId === null ? -1 : runs.index(w.runId));
    }
    return out;
  });
  return { streams, errors: errors.values, runs: runs.values };
}

class Interner {
  readonly values: string[] = [];
  private readonly seen = new Map<string, number>();

  index(value: string): number {
    let i = this.seen.get(value);
    if (i === undefined) {
      i = this.values.push(value) - 1;
      this.seen.set(value, i);
    }
    return i;
  }
}
