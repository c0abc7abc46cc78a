// The one style sheet of a report page, inlined and allowed by its hash. Colours by kind of
// state: LLM calls blue, tools green, checks amber, idle grey, a normal end teal, error states red.

export const PAGE_STYLE = `
:root { color-scheme: light; --llm: #3b6fd8; --tool: #2e9d57; --check: #d89a1c; --idle: #a7adb6; --end: #168c8c; --error: #d23c3c; --other: #8a5cc7; --ink: #1d232b; --muted: #5d6673; --line: #dde1e6; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); margin: 0; padding: 20px 28px 60px; max-width: 1120px; }
h1 { font-size: 22px; margin: 0 0 4px; word-break: break-all; }
h2 { font-size: 17px; margin: 28px 0 8px; }
h3 { font-size: 14px; margin: 0 0 4px; }
.sub, .hint, .facts { color: var(--muted); margin: 2px 0; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; background: var(--idle); vertical-align: middle; }
.badge.ok, .badge.end_of_turn, .badge.wrapped_up { background: var(--end); }
.badge.failed, .badge.error, .badge.budget_exceeded, .badge.stalled, .badge.cancelled { background: var(--error); }
.badge.incomplete { background: var(--check); }
.panel { border: 1px solid var(--line); border-left: 5px solid var(--idle); border-radius: 4px; padding: 10px 14px; margin: 14px 0; background: #fafbfc; }
.panel.failure { border-left-color: var(--error); background: #fff6f6; }
.panel.incomplete { border-left-color: var(--check); background: #fffaf0; }
.panel.ok { border-left-color: var(--end); }
.panel dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; }
.panel dt { color: var(--muted); }
.panel dd { margin: 0; word-break: break-word; }
pre { background: #f3f5f7; padding: 8px 10px; border-radius: 4px; overflow: auto; max-height: 340px; white-space: pre-wrap; word-break: break-word; margin: 6px 0; font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
table { border-collapse: collapse; width: 100%; margin: 6px 0; font-size: 13px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f3f5f7; font-weight: 600; }
table.moves th, #runs th { position: sticky; top: 0; }
#failures td.reason { word-break: break-word; }
#failures tr.o-error td:first-child, #failures tr.o-budget_exceeded td:first-child, #failures tr.o-stalled td:first-child { border-left: 4px solid var(--error); }
.all-well { border-left: 5px solid var(--end); padding: 6px 12px; background: #f3fbfb; }
.resumed { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 8px; font-size: 12px; background: #fff1d6; color: #7a5200; }
line.mark { stroke-width: 1.5; stroke-dasharray: 4 3; }
line.mark.crash { stroke: var(--error); }
line.mark.resume { stroke: var(--check); }
text.mark-label { font-size: 11px; }
text.mark-label.crash { fill: var(--error); }
text.mark-label.resume { fill: #8a5f00; }
td.num, th.num { text-align: right; white-space: nowrap; }
td.data { font: 12px ui-monospace, Menlo, Consolas, monospace; color: var(--muted); word-break: break-all; }
tr.forced td { background: #fff3e0; }
tr.rejected td { background: #fdecec; color: #8c1d1d; }
tr.picked td { background: #e6efff; }
table.moves tbody tr, #runs tbody tr { cursor: pointer; }
table.moves tbody tr:hover td, #runs tbody tr:hover td { background: #eef3fb; }
button { font: inherit; padding: 3px 10px; border: 1px solid #c5ccd5; background: #fff; border-radius: 4px; cursor: pointer; }
button:disabled { opacity: .45; cursor: default; }
button.sort { border: 0; background: none; padding: 0; font-weight: 600; }
th[aria-sort="ascending"] button.sort::after { content: " ▲"; }
th[aria-sort="descending"] button.sort::after { content: " ▼"; }
.controls { display: flex; gap: 12px; align-items: center; margin: 6px 0; flex-wrap: wrap; }
input, select { font: inherit; padding: 2px 6px; }
.timeline-box { overflow-x: auto; border: 1px solid var(--line); border-radius: 4px; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: var(--ink); }
svg .tick, svg .note { fill: var(--muted); }
svg .grid { stroke: #eceff2; }
svg .axis { stroke: #9aa3ad; }
svg .lane-alt { fill: #f6f8fa; }
svg .visit { cursor: pointer; stroke: none; }
svg .visit:hover, svg .visit:focus { stroke: var(--ink); stroke-width: 1.5; outline: none; }
svg .visit.final { stroke: var(--ink); stroke-width: 1; }
svg .visit.forced { stroke: #e07b00; stroke-width: 2; }
svg .visit.retried { stroke: var(--ink); stroke-width: 1.5; stroke-dasharray: 3 2; }
svg .mark-forced { stroke: #e07b00; stroke-width: 2; stroke-dasharray: 2 2; }
svg .mark-rejected { stroke: var(--error); stroke-width: 2.5; }
.k-llm { fill: var(--llm); background: var(--llm); stroke: var(--llm); }
.k-tool { fill: var(--tool); background: var(--tool); stroke: var(--tool); }
.k-check { fill: var(--check); background: var(--check); stroke: var(--check); }
.k-idle { fill: var(--idle); background: var(--idle); stroke: var(--idle); }
.k-end { fill: var(--end); background: var(--end); stroke: var(--end); }
.k-error { fill: var(--error); background: var(--error); stroke: var(--error); }
.k-other { fill: var(--other); background: var(--other); stroke: var(--other); }
.k-wait { fill: #e0b400; background: #e0b400; stroke: #e0b400; }
.k-other-0 { fill: #8a5cc7; background: #8a5cc7; stroke: #8a5cc7; }
.k-other-1 { fill: #c75c9e; background: #c75c9e; stroke: #c75c9e; }
.k-other-2 { fill: #5c8ac7; background: #5c8ac7; stroke: #5c8ac7; }
.k-other-3 { fill: #7a9a2e; background: #7a9a2e; stroke: #7a9a2e; }
.k-other-4 { fill: #b86b2e; background: #b86b2e; stroke: #b86b2e; }
.k-other-5 { fill: #2e8a9a; background: #2e8a9a; stroke: #2e8a9a; }
.k-other-6 { fill: #9a2e6b; background: #9a2e6b; stroke: #9a2e6b; }
.k-other-7 { fill: #6b6b2e; background: #6b6b2e; stroke: #6b6b2e; }
svg .line { fill: none; stroke-width: 2; }
.s-cost { stroke: var(--error); fill: var(--error); }
.s-in { stroke: var(--llm); fill: var(--llm); }
.s-out { stroke: var(--tool); fill: var(--tool); }
.s-cached { stroke: var(--other); fill: var(--other); }
svg .limit { stroke: var(--ink); stroke-width: 1.5; stroke-dasharray: 6 4; }
svg .limit-label { fill: var(--ink); font-weight: 600; }
svg .cap-used { fill: var(--llm); }
svg .cap-over { fill: var(--error); }
svg .cap-room { fill: #e9edf1; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 6px 0; color: var(--muted); font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 5px; vertical-align: -2px; }
.legend i.forced { background: #fff; border: 2px dashed #e07b00; }
.legend i.retried { background: #fff; border: 1.5px dashed var(--ink); }
.legend i.rejected { background: #fff; border: 2.5px solid var(--error); }
.detail { border: 1px solid var(--line); border-radius: 4px; padding: 10px 14px; margin: 10px 0; min-height: 54px; }
.detail .desc { margin: 4px 0; word-break: break-word; }
.why { color: #8c1d1d; word-break: break-word; }
.back { margin: 8px 0; }
details { margin: 20px 0; }
summary { cursor: pointer; color: var(--muted); }
.grid2 { display: grid; grid-template-columns: 1fr; gap: 8px; }
`;
