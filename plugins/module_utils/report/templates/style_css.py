"""style.css: the reports' inline CSS (page.html includes it). Light colours by default, dark ones when the
reader's system asks for them; class names from node classes and tones map onto these."""

NAME = "style.css"
TEMPLATE = """.chart .bar-before { fill-opacity: .35; } .chart .bar-after { fill-opacity: 1; }
.swatch.before { background: var(--cpu); opacity: .35; } .swatch.after { background: var(--cpu); }
:root { --bg: #ffffff; --fg: #1f2328; --muted: #636c76; --border: #d0d7de; --panel: #f6f8fa; --stripe: #f9fafb;
  --link: #0969da; --red: #cf222e; --red-bg: #ffebe9; --amber: #9a6700; --amber-bg: #fff8c5; --green: #1a7f37;
  --green-bg: #dafbe1; --blue: #0969da; --blue-bg: #ddf4ff; --grey-bg: #eaeef2;
  --cpu: #1f6feb; --memory: #8250df; --pods: #1a7f37; --other: #57606a; --track: #eef1f4;
  --low: #bf8700; --high: #cf222e; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --border: #30363d; --panel: #161b22; --stripe: #121820;
    --link: #4493f8; --red: #ff7b72; --red-bg: #3d1418; --amber: #e3b341; --amber-bg: #3a2d0a; --green: #56d364;
    --green-bg: #12301c; --blue: #79c0ff; --blue-bg: #0c2d4f; --grey-bg: #21262d;
    --cpu: #58a6ff; --memory: #bc8cff; --pods: #3fb950; --other: #8b949e; --track: #1c2128;
    --low: #e3b341; --high: #ff7b72; }
  .chart .bar-before { fill-opacity: .5; } .swatch.before { opacity: .5; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.45;
  font: 14px/1.45 -apple-system, "Segoe UI", system-ui, Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--border); }
h3 { font-size: 15px; margin: 18px 0 8px; }
a { color: var(--link); }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.muted { color: var(--muted); }
.meta { color: var(--muted); margin: 0 0 16px; }
nav { margin: 8px 0 0; font-size: 13px; }
nav a { margin-right: 14px; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0 8px; }
.figure { flex: 1 1 140px; border: 1px solid var(--border); border-radius: 8px; padding: 10px 14px;
  background: var(--panel); border-top: 4px solid var(--border); }
.figure-value { font-size: 26px; font-weight: 650; }
.figure-label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.figure.tone-red { border-top-color: var(--red); } .figure.tone-red .figure-value { color: var(--red); }
.figure.tone-amber { border-top-color: var(--amber); }
.figure.tone-green { border-top-color: var(--green); }
.figure.tone-blue { border-top-color: var(--blue); }
.notice { border: 1px solid var(--border); border-left: 5px solid var(--amber); background: var(--amber-bg);
  padding: 10px 14px; border-radius: 6px; margin: 12px 0; }
.notice.tone-red { border-left-color: var(--red); background: var(--red-bg); }
.columns { display: flex; flex-wrap: wrap; gap: 12px 40px; } .columns > * { flex: 0 1 auto; min-width: 220px; }
.columns > .limits { flex: 1 1 240px; max-width: 380px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: 4px 0 12px; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--border); }
thead th { background: var(--panel); position: sticky; top: 0; }
tbody tr:nth-child(even) { background: var(--stripe); }
tbody th { font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.nowrap { white-space: nowrap; }
.ns { color: var(--muted); }
tr.failed { background: var(--red-bg) !important; } tr.failed th { box-shadow: inset 4px 0 0 var(--red); }
tr.skipped th { box-shadow: inset 4px 0 0 var(--amber); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  background: var(--grey-bg); color: var(--fg); white-space: nowrap; margin: 1px 2px 1px 0; }
.badge.tone-red, .badge.tone-overutilized, .badge.tone-failed { background: var(--red-bg); color: var(--red); }
.badge.tone-amber, .badge.tone-underutilized, .badge.tone-skipped-cycle { background: var(--amber-bg);
  color: var(--amber); }
.badge.tone-green, .badge.tone-appropriately-utilized, .badge.tone-appropriate, .badge.tone-ok {
  background: var(--green-bg); color: var(--green); }
.badge.tone-blue { background: var(--blue-bg); color: var(--blue); }
.legend { display: flex; flex-wrap: wrap; gap: 16px; font-size: 12px; color: var(--muted); margin: 6px 0 10px;
  align-items: center; }
.swatch { display: inline-block; width: 22px; height: 9px; border-radius: 2px; vertical-align: middle;
  margin-right: 5px; }
.swatch.low { border-top: 2px dashed var(--low); height: 0; border-radius: 0; }
.swatch.high { border-top: 2px dashed var(--high); height: 0; border-radius: 0; }
.chart { width: 100%; height: auto; display: block; }
.chart text { fill: var(--fg); font-size: 12px; font-family: inherit; }
.chart .node-name { font-weight: 650; font-size: 13px; }
.chart .axis, .chart .value { fill: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
.chart .grid { stroke: var(--border); stroke-width: 1; }
.chart .separator { stroke: var(--border); stroke-width: 1; }
.chart .track { fill: var(--track); }
.chart .r-cpu { fill: var(--cpu); } .chart .r-memory { fill: var(--memory); } .chart .r-pods { fill: var(--pods); }
.chart .r-other { fill: var(--other); }
.chart .threshold { stroke-width: 2; stroke-dasharray: 4 3; }
.chart .threshold-low { stroke: var(--low); } .chart .threshold-high { stroke: var(--high); }
.chart .badge-box { fill: var(--grey-bg); }
.chart .badge-text { font-size: 11px; font-weight: 600; }
.chart .tone-overutilized .badge-box { fill: var(--red-bg); }
.chart .tone-overutilized .badge-text { fill: var(--red); }
.chart .tone-underutilized .badge-box { fill: var(--amber-bg); }
.chart .tone-underutilized .badge-text { fill: var(--amber); }
.chart .tone-appropriately-utilized .badge-box, .chart .tone-appropriate .badge-box { fill: var(--green-bg); }
.chart .tone-appropriately-utilized .badge-text, .chart .tone-appropriate .badge-text { fill: var(--green); }
ul.plain { list-style: none; margin: 0; padding: 0; }
.wrap-anywhere { overflow-wrap: anywhere; }
table.wide { font-size: 12px; } table.wide th, table.wide td { padding: 4px 6px; }
table.wide thead th { white-space: normal; } table.wide tbody th { overflow-wrap: anywhere; min-width: 9em; }
table.wide td { overflow-wrap: anywhere; }
.scatter { margin: 8px 0 16px; max-width: 760px; } .scatter figcaption { color: var(--muted); font-size: 12px; }
.scatter-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px 20px; }
.scatter-grid .scatter { margin: 0; }
.chart .axis-label { fill: var(--muted); font-size: 11px; }
.chart .pareto-front { fill: none; stroke: var(--amber); stroke-width: 2; stroke-dasharray: 6 3; }
.chart .point .dot { fill: var(--cpu); fill-opacity: .8; stroke: var(--bg); stroke-width: 1; }
.chart .point-threshold .dot { fill: var(--memory); } .chart .point-operator .dot { fill: var(--other); }
.chart .point.on-front .dot { stroke: var(--amber); stroke-width: 2; }
.chart .point.excluded .dot { fill: var(--bg); stroke: var(--muted); stroke-width: 1.5; }
.chart .point.chosen .dot { fill: var(--green); fill-opacity: 1; }
.chart .chosen-ring { fill: none; stroke: var(--green); stroke-width: 2.5; }
.chart .point-label { font-size: 11px; } .chart .chosen .point-label { font-weight: 650; fill: var(--green); }
.error { color: var(--red); }
td svg { vertical-align: middle; }
.plain li { margin: 0; }
.minibar { fill: var(--cpu); } .minibar-track { fill: var(--track); }
.scale.tone-amber { color: var(--amber); background: var(--amber-bg); padding: 6px 10px; border-radius: 6px; }
details.pager-more > summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
@media print { thead th { position: static; } }
"""
