/**
 * The page's stylesheet, inline so the page is one file that needs no network. Window colours: done green, done
 * with rejects from yellow-green to orange by their share, failed red, pending blue, never loaded grey.
 */
export const PAGE_STYLE = `
:root { --done:#2da44e; --r1:#8db83a; --r2:#d4a72c; --r3:#e16f24; --failed:#cf222e; --pending:#54aeff; --missing:#d0d7de;
  --ink:#1f2328; --muted:#59636e; --line:#d8dee4; --bg:#f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1120px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 20px; margin: 0; }
h2 { font-size: 16px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 18px 0 6px; }
.meta { color: var(--muted); font-size: 12px; margin-top: 2px; }
.banner { margin: 16px 0; padding: 12px 16px; border-radius: 8px; border: 1px solid; }
.banner.ok { background: #dafbe1; border-color: #aceebb; }
.banner.bad { background: #ffebe9; border-color: #ffcecb; }
.banner.warn { background: #fff8c5; border-color: #f5e0a0; }
.banner strong { font-size: 16px; }
.banner ul { margin: 6px 0 0; padding-left: 20px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card .name { font-weight: 600; }
.card .big { font-size: 22px; font-weight: 600; margin: 2px 0; }
.card .lag { font-weight: 600; }
.card .lag.late { color: var(--failed); }
.card dl { display: grid; grid-template-columns: auto auto; gap: 0 12px; margin: 8px 0 0; font-size: 13px; }
.card dt { color: var(--muted); } .card dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.bad-text { color: var(--failed); font-weight: 600; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; font-size: 12px; color: var(--muted); margin: 4px 0 8px; }
.legend i { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
.cal { display: block; max-width: 100%; height: auto; }
.cal text { font-size: 10px; fill: var(--muted); }
.cells rect { rx: 2px; cursor: pointer; }
.cells rect:hover, .cells rect.sel { stroke: var(--ink); stroke-width: 1.5px; }
.d, .sw-d { fill: var(--done); background: var(--done); }
.r1, .sw-r1 { fill: var(--r1); background: var(--r1); }
.r2, .sw-r2 { fill: var(--r2); background: var(--r2); }
.r3, .sw-r3 { fill: var(--r3); background: var(--r3); }
.f, .sw-f { fill: var(--failed); background: var(--failed); }
.p, .sw-p { fill: var(--pending); background: var(--pending); }
.m, .sw-m { fill: var(--missing); background: var(--missing); }
.detail { font-size: 13px; background: var(--bg); border-radius: 6px; padding: 8px 12px; margin-top: 6px; }
.detail:empty { display: none; }
.tip { position: fixed; z-index: 10; pointer-events: none; background: var(--ink); color: #fff; font-size: 12px; padding: 6px 9px; border-radius: 6px; max-width: 420px; white-space: pre-wrap; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; text-align: left; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.err { max-width: 340px; overflow-wrap: anywhere; color: var(--failed); }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; }
.badge.succeeded, .badge.done { background: var(--done); } .badge.failed { background: var(--failed); }
.badge.running, .badge.open { background: var(--pending); } .badge.abandoned, .badge.superseded { background: #8c959f; }
.bar { position: relative; height: 10px; background: var(--bg); border-radius: 3px; min-width: 120px; }
.bar span { position: absolute; top: 0; bottom: 0; border-radius: 3px; }
.bar .ok { background: var(--done); } .bar .no { background: var(--failed); } .bar .n { background: #8c959f; }
pre { margin: 4px 0; padding: 8px; background: var(--bg); border-radius: 6px; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 260px; overflow: auto; }
details summary { cursor: pointer; color: var(--muted); font-size: 12px; }
.chart text { font-size: 10px; fill: var(--muted); }
.quiet { color: var(--muted); }
`;
