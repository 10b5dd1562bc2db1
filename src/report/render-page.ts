import { formatInstant } from './format.js';
import { html, jsonInScript, trustedHtml } from './html.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';
import type { ReportModel } from './report-model.js';
import { renderBackfills, renderRuns } from './render-activity.js';
import { renderCalendar, renderLegend } from './render-calendar.js';
import { renderRejects } from './render-rejects.js';
import {
  renderBanner,
  renderStreamCards,
  renderTableSizes,
  renderUnlistedFields,
  renderSchemaChanges,
  renderWebhookEvents,
} from './render-summary.js';
import { encodeWindowData } from './window-data.js';

/** How the page is shown. */
export interface PageOptions {
  /** Seconds after which the browser reloads the page (when it is served and rewritten); none by default. */
  refreshSeconds?: number;
  /**
   * Show the rejected records' payloads and errors (they hold customer data: names, e-mails, phones); off by
   * default, so a page that is forwarded or served carries none.
   */
  rejectPayloads?: boolean;
}

/** Which release last opened the warehouse, and which one made this page. */
function releaseText({ warehouseRelease: r }: ReportModel): string {
  const opened = r.openedBy ? `opened by loyalty-etl ${r.openedBy}` : 'opened by no recorded release';
  return `${opened}${r.migration ? `, migrated through ${r.migration.version}` : ''}; page by loyalty-etl ${r.release}`;
}

/**
 * The status page: one self-contained HTML document (inline style, inline SVG, one small script, no network).
 * From the top: is it complete and how far behind; a card per stream; each stream's windows as a calendar;
 * the last runs; rejects; backfills; table sizes. Every text from the warehouse is escaped.
 */
export function renderReportPage(model: ReportModel, options: PageOptions = {}): string {
  const refresh = options.refreshSeconds
    ? html`<meta http-equiv="refresh" content="${Math.max(1, Math.round(options.refreshSeconds))}">`
    : '';
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${refresh}
<link rel="icon" href="data:,">
<title>${`loyalty-etl · ${model.job} · ${model.lastClosedDay}`}</title>
<style>${trustedHtml(PAGE_STYLE)}</style>
</head>
<body>
<main>
<h1>loyalty-etl · job ${model.job}</h1>
<div class="meta">${model.warehouse} · ${releaseText(model)} · window days in ${model.timezone} · last closed day ${model.lastClosedDay} · page made ${formatInstant(model.generatedAt)}</div>
${renderBanner(model)}
${renderStreamCards(model)}
${renderWebhookEvents(model)}
<h2>Windows</h2>
<div class="meta">${model.windowDays === 1 ? 'one cell per daily window' : `one cell per ${model.windowDays}-day window`}, from the first day ${model.firstDay}; hover a cell for its counts, click it to keep them</div>
${renderLegend()}
${model.streams.map((s) => html`<section class="stream" data-stream="${s.stream}"><h3>${s.stream}</h3>${renderCalendar(s, model.windowDays)}</section>`)}
<h2>Last runs</h2>
${renderRuns(model)}
<h2>Rejects</h2>
${renderRejects(model, options.rejectPayloads === true)}
<h2>Backfills</h2>
${renderBackfills(model)}
<h2>Fields the spec does not list</h2>
${renderUnlistedFields(model)}
<h2>Schema changes of what analysts read</h2>
${renderSchemaChanges(model)}
<h2>Tables</h2>
${renderTableSizes(model)}
</main>
<script type="application/json" id="report-data">${jsonInScript(encodeWindowData(model))}</script>
<script>${trustedHtml(PAGE_SCRIPT)}</script>
</body>
</html>
`;
  return page.text;
}
