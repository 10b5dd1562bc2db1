import { clip, formatCount, formatInstant, formatShare, plural } from './format.js';
import { html, type SafeHtml } from './html.js';
import type { ReportModel, StreamReport } from './report-model.js';

/**
 * The answer to "how far behind are we, and is it complete?", first thing on the page: green when every stream
 * is loaded through the last closed day with no failed or missing window, red with what is wrong otherwise.
 */
export function renderBanner(model: ReportModel): SafeHtml {
  let severity: 'ok' | 'warn' | 'bad' = 'ok';
  const lines: SafeHtml[] = [];
  for (const s of model.streams) {
    const bad = [
      s.windowsFailed > 0 && plural(s.windowsFailed, 'failed window'),
      s.gaps > 0 && `${plural(s.gaps, 'gap')} (windows never loaded, later ones were)`,
      s.completeThrough === null && 'never loaded',
    ].filter((p): p is string => typeof p === 'string');
    const late = [
      s.completeThrough !== null &&
        (s.lagDays ?? 0) > 0 &&
        `complete through ${s.completeThrough}, ${plural(s.lagDays!, 'day')} behind`,
      s.windowsPending > 0 && `${plural(s.windowsPending, 'window')} pending`,
    ].filter((p): p is string => typeof p === 'string');
    if (bad.length > 0) severity = 'bad';
    else if (late.length > 0 && severity === 'ok') severity = 'warn';
    if (bad.length + late.length > 0) lines.push(html`<li><b>${s.stream}</b>: ${[...bad, ...late].join('; ')}</li>`);
  }
  const last = model.runs[0];
  if (last?.status === 'failed') {
    severity = 'bad';
    lines.push(
      html`<li>the last run (${last.command}, ${formatInstant(last.startedAt)}) failed${last.error ? `: ${clip(last.error, 240)}` : ''}</li>`,
    );
  }
  const quarantined = model.quarantinedEvents;
  if (quarantined) {
    severity = 'bad';
    lines.push(
      html`<li>${plural(quarantined.events, 'webhook event')} held in quarantine (received, but not storable in loyalty_events; the last ${formatInstant(quarantined.lastAt)}): their reasons are in _etl_event_quarantine</li>`,
    );
  }
  const lock = model.runLock;
  if (lock)
    lines.push(
      html`<li>a run is in progress: ${lock.runId}${lock.pid !== null ? ` (pid ${lock.pid}${lock.host ? ` on ${lock.host}` : ''})` : ''} since ${formatInstant(lock.since)}</li>`,
    );
  const headline = {
    ok: html`<strong>Complete</strong>: every stream is loaded through ${model.lastClosedDay}, the last closed day`,
    warn: html`<strong>Behind</strong>`,
    bad: html`<strong>Needs attention</strong>`,
  }[severity];
  return html`<div class="banner ${severity}">${headline}${lines.length > 0 ? html`<ul>${lines}</ul>` : ''}</div>`;
}

/** One card per stream: the watermark and the lag, then its windows, rows, rejects and requests. */
export function renderStreamCards(model: ReportModel): SafeHtml {
  return html`<div class="cards">${model.streams.map((s) => renderCard(s))}</div>`;
}

function renderCard(s: StreamReport): SafeHtml {
  const lag =
    s.lagDays === null ? 'never loaded' : s.lagDays === 0 ? 'up to date' : `${plural(s.lagDays, 'day')} behind`;
  const never = s.windows.filter((w) => w.status === 'missing').length;
  return html`<div class="card" data-stream="${s.stream}">
<div class="name">${s.stream}</div>
<div class="quiet">complete through</div>
<div class="big">${s.completeThrough ?? '–'}</div>
<div class="lag${s.lagDays === 0 ? '' : ' late'}">${lag}</div>
<dl>
<dt>windows done</dt><dd>${formatCount(s.windowsDone)}</dd>
<dt>failed</dt><dd class="${s.windowsFailed > 0 ? 'bad-text' : ''}">${formatCount(s.windowsFailed)}</dd>
<dt>pending</dt><dd>${formatCount(s.windowsPending)}</dd>
<dt>never loaded</dt><dd class="${s.gaps > 0 ? 'bad-text' : ''}">${formatCount(never)}${s.gaps > 0 ? ` (${formatCount(s.gaps)} gaps)` : ''}</dd>
<dt>rows loaded</dt><dd>${formatCount(s.rowsLoaded)}</dd>
<dt>rejects</dt><dd>${formatCount(s.rejects)} (${formatShare(s.rejects, s.rowsLoaded + s.rejects)})</dd>
<dt>requests</dt><dd>${formatCount(s.requests)}</dd>
</dl>
</div>`;
}

/** The webhook events line, for a job whose postings ask the customers of webhook events. */
export function renderWebhookEvents(model: ReportModel): SafeHtml | '' {
  const e = model.webhookEvents;
  if (!e) return '';
  return html`<p>Webhook events: ${formatCount(e.stored)} stored${e.lastReceivedAt ? `, the last received ${formatInstant(e.lastReceivedAt)}` : ''}; ${formatCount(e.backlog)} not yet asked about by loyalty_postings (bookmark at event ${e.bookmark}).</p>`;
}

/** Every table of the warehouse schema and its rows. */
/** Members the service sends that the spec does not list: where each is kept, when it was first and last seen. */
export function renderUnlistedFields(model: ReportModel): SafeHtml {
  const fields = model.unlistedFields ?? [];
  if (fields.length === 0)
    return html`<p class="meta">none: every record the service sent held only the members the spec lists</p>`;
  return html`<table class="unlisted"><thead><tr><th>field</th><th>record</th><th>kept in</th><th>first seen</th><th>last seen</th><th class="num">records</th></tr></thead><tbody>
${fields.map(
  (f) =>
    html`<tr><td>${f.field_path}</td><td>${f.record_type}</td><td>${f.table_name}._unlisted</td><td>${formatInstant(f.first_seen_at)}</td><td>${formatInstant(f.last_seen_at)}</td><td class="num">${formatCount(f.records)}</td></tr>`,
)}
</tbody></table>`;
}

export function renderTableSizes(model: ReportModel): SafeHtml {
  const most = Math.max(1, ...model.tables.map((t) => t.rows));
  return html`<table class="sizes"><thead><tr><th>table</th><th class="num">rows</th><th></th></tr></thead><tbody>
${model.tables.map((t) => html`<tr><td>${t.table}</td><td class="num">${formatCount(t.rows)}</td><td><div class="bar"><span class="n" style="left:0;width:${((100 * t.rows) / most).toFixed(1)}%"></span></div></td></tr>`)}
</tbody></table>`;
}

/** The last changes of the tables and views analysts read: where, what, from which type to which, and why. */
export function renderSchemaChanges(model: ReportModel): SafeHtml {
  const { changes, total } = model.schemaChanges ?? { changes: [], total: 0 };
  if (total === 0) return html`<p class="meta">none: no view or column analysts read has changed</p>`;
  return html`<p class="meta">${formatCount(total)} in _etl_schema_changes${total > changes.length ? `, the last ${changes.length} here` : ''}</p>
<table class="schema-changes"><thead><tr><th>when</th><th>where</th><th>change</th><th>from → to</th><th class="num">values</th><th>why</th></tr></thead><tbody>
${changes.map(
  (c) =>
    html`<tr><td>${formatInstant(c.changed_at)}</td><td>${c.column_name === null ? c.object_name : `${c.object_name}.${c.column_name}`}</td><td>${c.change}</td><td>${c.from_type || c.to_type ? `${c.from_type ?? '—'} → ${c.to_type ?? '—'}` : ''}</td><td class="num">${c.value_count === null ? '' : formatCount(c.value_count)}</td><td>${c.reason}</td></tr>`,
)}
</tbody></table>`;
}
