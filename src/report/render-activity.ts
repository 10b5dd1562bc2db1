import type { BackfillSummary, RunSummary } from '../state/status-report.js';
import { clip, formatCount, formatDuration, formatInstant } from './format.js';
import { html, type SafeHtml } from './html.js';
import type { ReportModel } from './report-model.js';

const STRIP = { width: 1060, height: 34 };

/**
 * The last runs, newest first: when each started and ran (a strip of them on one time axis, so a missed night
 * shows as a hole), then a row each with its status, duration, windows, rows, rejects, requests and error.
 */
export function renderRuns(model: ReportModel): SafeHtml {
  if (model.runs.length === 0) return html`<p class="quiet">No run yet.</p>`;
  const longest = Math.max(1, ...model.runs.map((r) => r.durationSeconds ?? 0));
  return html`${renderRunStrip(model.runs, model.generatedAt)}
<table class="runs"><thead><tr><th>started</th><th>command</th><th>status</th><th>duration</th><th class="num">windows</th><th class="num">rows loaded</th><th class="num">rejected</th><th class="num">requests</th><th>error</th></tr></thead><tbody>
${model.runs.map((r) => renderRun(r, longest))}
</tbody></table>`;
}

function renderRun(r: RunSummary, longest: number): SafeHtml {
  const width = r.durationSeconds === null ? 0 : Math.max(1, (100 * r.durationSeconds) / longest);
  const duration = r.durationSeconds === null ? r.status : formatDuration(r.durationSeconds);
  return html`<tr data-run="${r.runId}">
<td>${formatInstant(r.startedAt)}</td><td>${r.command}</td><td><span class="badge ${r.status}">${r.status}</span></td>
<td><div class="bar" title="${duration}"><span class="${r.status === 'failed' ? 'no' : 'ok'}" style="left:0;width:${width.toFixed(1)}%"></span></div>${duration}</td>
<td class="num">${formatCount(r.windows)}</td><td class="num">${formatCount(r.rowsLoaded)}</td><td class="num">${formatCount(r.rowsRejected)}</td><td class="num">${r.requests === null ? '–' : formatCount(r.requests)}</td>
<td class="err" title="${r.error ?? ''}">${r.error ? clip(r.error, 200) : ''}</td>
</tr>`;
}

/** The runs on one time axis, from the oldest shown to the page's time: a bar per run, as long as it ran (at least 3 px). */
function renderRunStrip(runs: RunSummary[], now: string): SafeHtml {
  const start = Math.min(...runs.map((r) => Date.parse(r.startedAt)));
  const end = Math.max(Date.parse(now), ...runs.map((r) => Date.parse(r.finishedAt ?? now)));
  const span = Math.max(1, end - start);
  const x = (t: number) => 4 + ((STRIP.width - 8) * (t - start)) / span;
  const bars = runs.map((r) => {
    const from = x(Date.parse(r.startedAt));
    const to = x(Date.parse(r.finishedAt ?? now));
    return html`<rect x="${from.toFixed(1)}" y="4" width="${Math.max(3, to - from).toFixed(1)}" height="18" class="${r.status === 'failed' ? 'f' : r.status === 'succeeded' ? 'd' : 'p'}"><title>${`${formatInstant(r.startedAt)} ${r.command}: ${r.status}`}</title></rect>`;
  });
  return html`<svg class="chart strip" width="${STRIP.width}" height="${STRIP.height}" viewBox="0 0 ${STRIP.width} ${STRIP.height}" role="img" aria-label="runs over time">
<line x1="4" y1="23" x2="${STRIP.width - 4}" y2="23" stroke="#d8dee4"/>${bars}
<text x="4" y="33">${formatInstant(new Date(start).toISOString())}</text><text x="${STRIP.width - 4}" y="33" text-anchor="end">${formatInstant(new Date(end).toISOString())}</text>
</svg>`;
}

/** Open backfills with their progress, then the latest finished ones. */
export function renderBackfills(model: ReportModel): SafeHtml {
  if (model.backfills.length === 0) return html`<p class="quiet">No backfill.</p>`;
  return html`<table class="backfills"><thead><tr><th>backfill</th><th>range</th><th>streams</th><th>status</th><th>progress</th><th class="num">workers</th><th>started</th><th>finished</th></tr></thead><tbody>
${model.backfills.map((b) => renderBackfill(b))}
</tbody></table>`;
}

function renderBackfill(b: BackfillSummary): SafeHtml {
  const total = Math.max(1, b.windowsTotal);
  const done = (100 * b.windowsDone) / total;
  const failed = (100 * b.windowsFailed) / total;
  return html`<tr data-backfill="${b.backfillId}">
<td>${b.backfillId}</td><td>${b.from} .. ${b.to}</td><td>${b.streams.join(', ')}</td><td><span class="badge ${b.status}">${b.status}</span></td>
<td><div class="bar"><span class="ok" style="left:0;width:${done.toFixed(1)}%"></span><span class="no" style="left:${done.toFixed(1)}%;width:${failed.toFixed(1)}%"></span></div>
${formatCount(b.windowsDone)} of ${formatCount(b.windowsTotal)} windows done${b.windowsFailed > 0 ? html`, <span class="bad-text">${formatCount(b.windowsFailed)} failed</span>` : ''}</td>
<td class="num">${b.liveWorkers}</td><td>${formatInstant(b.startedAt)}</td><td>${formatInstant(b.finishedAt)}</td>
</tr>`;
}
