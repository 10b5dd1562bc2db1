import { dayNumber, dayText, weekday, type Day } from '../plan/days.js';
import { clip, formatCount } from './format.js';
import { html, type SafeHtml } from './html.js';
import type { RejectDay, ReportModel } from './report-model.js';

/** Rejects of a run of days: a day, a week (from Monday) or a month, whichever keeps the chart to about a hundred bars. */
export interface RejectBucket {
  start: Day;
  /** Per stream, in the order of the streams given. */
  counts: number[];
}

const PALETTE = ['#0969da', '#8250df', '#bf8700', '#1a7f37', '#cf222e'];
const CHART = { width: 1060, height: 150, left: 44, bottom: 18 };

/**
 * Rejects per source day from `from` through `to`, every bucket present (a quiet day is a zero, not a hole),
 * by day up to 120 days, by week up to two years, by month beyond.
 */
export function rejectBuckets(
  days: readonly RejectDay[],
  streams: readonly string[],
  from: Day,
  to: Day,
): { unit: 'day' | 'week' | 'month'; buckets: RejectBucket[] } {
  const first = dayNumber(from);
  const last = dayNumber(to);
  const unit = last - first < 120 ? 'day' : last - first < 731 ? 'week' : 'month';
  const bucketOf = (day: Day): Day =>
    unit === 'day' ? day : unit === 'week' ? dayText(dayNumber(day) - weekday(day)) : `${day.slice(0, 7)}-01`;
  const buckets = new Map<Day, RejectBucket>();
  for (let n = first; n <= last; n++) {
    const start = bucketOf(dayText(n));
    if (!buckets.has(start)) buckets.set(start, { start, counts: streams.map(() => 0) });
  }
  for (const d of days) {
    const bucket = buckets.get(bucketOf(d.day));
    const i = streams.indexOf(d.stream);
    if (bucket && i >= 0) bucket.counts[i]! += d.count;
  }
  return { unit, buckets: [...buckets.values()] };
}

/**
 * The rejects chart (stacked bars per stream) and the most frequent reasons, each with its latest error and
 * payload when `payloads` asks for them: both quote customer data, so by default only the reason (its quoted
 * values blanked) is shown.
 */
export function renderRejects(model: ReportModel, payloads = false): SafeHtml {
  const total = model.rejectDays.reduce((n, d) => n + d.count, 0);
  if (total === 0) return html`<p class="quiet">No record is rejected.</p>`;
  return html`${renderRejectChart(model)}
<h3>Most frequent reasons</h3>
<table class="reasons"><thead><tr><th>stream</th><th>reason</th><th class="num">records</th><th>latest example</th></tr></thead><tbody>
${model.rejectReasons.map(
  (r) => html`<tr><td>${r.stream}</td><td>${r.reason}</td><td class="num">${formatCount(r.count)}</td>
<td>${
    payloads
      ? html`<div>window ${r.example.windowStart}: ${clip(r.example.error, 300)}</div><details><summary>payload</summary><pre>${prettyJson(r.example.payload)}</pre></details>`
      : html`<div>window ${r.example.windowStart}</div>`
  }</td></tr>`,
)}
</tbody></table>
${payloads ? '' : html`<p class="quiet">The records themselves are left off this page (they hold customer data); <code>loyalty-etl report --reject-payloads</code> shows them, and <code>_etl_rejects</code> holds them.</p>`}`;
}

function renderRejectChart(model: ReportModel): SafeHtml {
  const streams = model.streams.map((s) => s.stream);
  const days = model.rejectDays.map((d) => d.day);
  const starts = model.streams.map((s) => s.windows[0]?.start).filter((d): d is Day => d !== undefined);
  const from = [...starts, ...days].reduce((a, b) => (b < a ? b : a));
  const to = [model.lastClosedDay, ...days].reduce((a, b) => (b > a ? b : a));
  const { unit, buckets } = rejectBuckets(model.rejectDays, streams, from, to);
  const most = Math.max(1, ...buckets.map((b) => b.counts.reduce((x, y) => x + y, 0)));
  const plot = { width: CHART.width - CHART.left - 4, height: CHART.height - CHART.bottom - 6 };
  const step = plot.width / buckets.length;
  const bars = buckets.map((b, i) => {
    let y = CHART.height - CHART.bottom;
    const parts = b.counts.map((n, s) => {
      if (n === 0) return '';
      const h = (plot.height * n) / most;
      y -= h;
      return html`<rect x="${(CHART.left + i * step).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(1, step - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${PALETTE[s % PALETTE.length]!}"/>`;
    });
    const label = `${unit} of ${b.start}: ${streams.map((s, k) => `${s} ${b.counts[k]}`).join(', ')}`;
    return b.counts.some((n) => n > 0) ? html`<g><title>${label}</title>${parts}</g>` : '';
  });
  const base = CHART.height - CHART.bottom;
  const ticks = [0, Math.floor(buckets.length / 2), buckets.length - 1].filter((v, i, a) => a.indexOf(v) === i);
  return html`<div class="legend">${streams.map((s, i) => html`<span><i style="background:${PALETTE[i % PALETTE.length]!}"></i>${s}</span>`)}<span>rejected records per ${unit} of source data</span></div>
<svg class="chart rejects" width="${CHART.width}" height="${CHART.height}" viewBox="0 0 ${CHART.width} ${CHART.height}" role="img" aria-label="rejected records per ${unit}">
<line x1="${CHART.left}" y1="${base}" x2="${CHART.width - 4}" y2="${base}" stroke="#d8dee4"/>
<text x="${CHART.left - 6}" y="14" text-anchor="end">${formatCount(most)}</text><text x="${CHART.left - 6}" y="${base}" text-anchor="end">0</text>
${bars}
${ticks.map((i) => (i === buckets.length - 1 && i > 0 ? html`<text x="${(CHART.left + (i + 1) * step).toFixed(1)}" y="${CHART.height - 4}" text-anchor="end">${buckets[i]!.start}</text>` : html`<text x="${(CHART.left + i * step).toFixed(1)}" y="${CHART.height - 4}">${buckets[i]!.start}</text>`))}
</svg>`;
}

/** A payload indented for reading when it is whole JSON; as stored otherwise (it may have been cut). */
function prettyJson(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}
