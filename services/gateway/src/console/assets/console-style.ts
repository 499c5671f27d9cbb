/** The console's one style sheet, served as /console/assets/<digest>/console-style.css (CSP style-src 'self'). */
export const consoleStyle = `:root {
  color-scheme: light dark;
  --accent: #2457c5;
  --danger: #b3261e;
  --muted: #666;
  --border: #ccc;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  line-height: 1.5;
}
body { margin: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.skip-link { position: absolute; left: -10000px; }
.skip-link:focus { left: 1rem; top: 1rem; background: Canvas; padding: 0.5rem; z-index: 1; }
header.console { display: flex; gap: 1.5rem; align-items: center; padding: 0.75rem 1.5rem; border-bottom: 1px solid var(--border); }
header.console nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
header.console .who { margin-left: auto; color: var(--muted); display: flex; gap: 0.75rem; align-items: center; }
header.console form { margin: 0; }
main { padding: 1.5rem; max-width: 70rem; }
.flash { padding: 0.75rem 1rem; border-radius: 4px; margin-bottom: 1rem; border: 1px solid var(--border); }
.flash.success { border-color: #2e7d32; }
.flash.error { border-color: var(--danger); }
form.stacked label { display: block; margin-top: 0.75rem; font-weight: 600; }
form.stacked input, form.stacked select, form.stacked textarea { display: block; width: 100%; max-width: 30rem; padding: 0.4rem; font: inherit; }
form.stacked button { margin-top: 1rem; }
.field-error { color: var(--danger); }
button { font: inherit; padding: 0.4rem 0.9rem; cursor: pointer; }
button.danger { color: var(--danger); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.4rem 0.6rem; border-bottom: 1px solid var(--border); }
time[title] { text-decoration: underline dotted; }
/* Payloads wrap rather than scroll: a scrolling region would have to be focusable for keyboard users. */
pre { white-space: pre-wrap; word-break: break-all; background: color-mix(in srgb, Canvas 92%, CanvasText); padding: 0.75rem; border-radius: 4px; }
.muted { color: var(--muted); }
.actions { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
.actions form { margin: 0; }
form.filters { display: flex; gap: 0.5rem; align-items: end; flex-wrap: wrap; margin-bottom: 1rem; }
fieldset#event-types .choice { display: flex; gap: 0.4rem; align-items: center; }
fieldset#event-types .choice input { width: auto; display: inline; }
/* A fieldset is min-content wide by default: a long event type must wrap, not widen the page. */
fieldset#event-types { min-width: 0; }
fieldset#event-types .choice label { min-width: 0; overflow-wrap: anywhere; }
.health, .status { font-weight: 600; }
.health-healthy, .status-succeeded { color: #2e7d32; }
.health-degraded, .status-awaiting_retry { color: #a15c00; }
.health-failing, .status-dead_lettered, .attention { color: var(--danger); }
.health-paused, .status-held { color: var(--muted); }
.chart svg { max-width: 48rem; height: auto; }
.chart-succeeded { fill: #2e7d32; }
.chart-failed { fill: var(--danger); }
.chart-axis { stroke: var(--border); }
.chart-label { fill: var(--muted); font-size: 11px; }
.legend { margin-right: 1rem; }
.chart-succeeded-key::before { content: "■ "; color: #2e7d32; }
.chart-failed-key::before { content: "■ "; color: var(--danger); }
.table-scroll { overflow-x: auto; }
h1, dd { overflow-wrap: anywhere; }
.table-scroll:focus-visible { outline-offset: -3px; }
form.stacked input, form.stacked select, form.stacked textarea, .invitation-link { box-sizing: border-box; }
form.inline { display: inline-flex; gap: 0.4rem; align-items: center; margin: 0.2rem 0.6rem 0.2rem 0; flex-wrap: wrap; }
form.inline label { position: absolute; left: -10000px; }
.attention-list li { margin: 0.4rem 0; }
.attention-list .next-step, .next-step { font-weight: 600; margin-left: 0.5rem; }
.meter { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 0.5rem 0; }
.meter meter { width: 16rem; max-width: 100%; }
.flag { color: var(--danger); font-weight: 600; }
.invitation-link { width: 100%; font-family: ui-monospace, monospace; padding: 0.4rem; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
@media (max-width: 40rem) {
  header.console { flex-wrap: wrap; gap: 0.5rem 1rem; padding: 0.75rem 1rem; }
  header.console nav ul { flex-wrap: wrap; }
  header.console .who { margin-left: 0; flex-wrap: wrap; }
  main { padding: 1rem; }
}
.htmx-indicator { opacity: 0; }
.htmx-request .htmx-indicator, .htmx-request.htmx-indicator { opacity: 1; transition: opacity 200ms ease-in; }
`;
