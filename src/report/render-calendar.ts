import { calendarLayout } from './calendar-layout.js';
import { html, trustedHtml, type SafeHtml } from './html.js';
import type { StreamReport } from './report-model.js';

const LEGEND: Array<[string, string]> = [
  ['d', 'done'],
  ['r1', 'done, < 1% rejected'],
  ['r2', 'done, 1–5% rejected'],
  ['r3', 'done, ≥ 5% rejected'],
  ['f', 'failed'],
  ['p', 'pending'],
  ['m', 'never loaded'],
];

/** What the colours of the calendars mean. */
export function renderLegend(): SafeHtml {
  return html`<div class="legend">${LEGEND.map(([cls, text]) => html`<span><i class="sw-${cls}"></i>${text}</span>`)}</div>`;
}

/**
 * A stream's windows as an SVG calendar: one `rect` per window, in the order of `stream.windows`, its class
 * its status (see `cellClass`); the page's script shows a window's details from the data block by that order.
 */
export function renderCalendar(stream: StreamReport, windowDays: number): SafeHtml {
  const layout = calendarLayout(stream.windows, windowDays);
  if (layout.cells.length === 0) return html`<p class="quiet">No window of ${stream.stream} yet.</p>`;
  // numbers and class names made here, no warehouse text; no whitespace between cells, so years of daily windows stay small
  const cells = layout.cells
    .map((c) => `<rect x="${c.x}" y="${c.y}" width="${c.width}" height="${c.height}" class="${c.cls}"/>`)
    .join('');
  return html`<div class="calendar">
<svg class="cal" data-stream="${stream.stream}" width="${layout.width}" height="${layout.height}" viewBox="0 0 ${layout.width} ${layout.height}" role="img" aria-label="${`windows of ${stream.stream}`}">
${layout.labels.map((l) => html`<text x="${l.x}" y="${l.y}">${l.text}</text>`)}
<g class="cells">${trustedHtml(cells)}</g>
</svg>
<div class="detail"></div>
</div>`;
}
