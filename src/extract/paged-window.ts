import type { SourcePage } from '../source/loyalty-api.js';
import { SourceError } from '../source/source-errors.js';

/** A page handed to the pipeline; `restart` says everything handed before it for this window must be dropped. */
export interface ExtractedPage {
  records: unknown[];
  restart: boolean;
}

/**
 * Reads every page of an offset-paginated listing. The listing is complete when `totalCount` stayed the same
 * on every page and the pages held exactly that many records; otherwise the source changed while it was
 * being read (records shifted between pages), and the whole listing is read again, up to `maxPasses` times.
 *
 * @example
 * for await (const page of readAllPages((n) => api.accountsPage(window, n, 500), 500, 'accounts')) { ... }
 */
export async function* readAllPages(
  fetchPage: (page: number) => Promise<SourcePage>,
  pageSize: number,
  label: string,
  maxPasses = 3,
): AsyncGenerator<ExtractedPage> {
  let lastProblem = '';
  for (let pass = 1; pass <= maxPasses; pass++) {
    let total: number | undefined;
    let received = 0;
    let stable = true;
    for (let page = 1; ; page++) {
      const result = await fetchPage(page);
      if (total === undefined) total = result.totalCount;
      else if (result.totalCount !== total) stable = false;
      received += result.data.length;
      if (result.data.length > pageSize) throw new SourceError(`${label}: page ${page} holds ${result.data.length} records, more than the ${pageSize} asked for`, label);
      yield { records: result.data, restart: pass > 1 && page === 1 };
      if (result.data.length === 0 || page * pageSize >= Math.max(total, result.totalCount)) break;
    }
    if (stable && received === total) return;
    lastProblem = `totalCount ${total} but ${received} records read${stable ? '' : ', and totalCount changed between pages'}`;
  }
  throw new SourceError(`${label}: listing kept changing while it was read (${lastProblem}) after ${maxPasses} passes`, label);
}
