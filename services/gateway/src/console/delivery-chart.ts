import { html, type SafeHtml } from "./html.js";
import { utcText } from "./layout.js";

/** One hour of an endpoint's attempts, as GetEndpointStats answers it (oldest first). */
export interface HourOfAttempts {
  /** RFC 3339 UTC: the start of the hour. */
  start: string;
  succeeded: number;
  failed: number;
}

const WIDTH = 720;
const HEIGHT = 200;
const AXIS = 24; // room for the hour labels under the bars
const GAP = 4;

const hourLabel = (start: string) => start.slice(11, 16);

/**
 * Successes and failures per hour over 24 hours as a server-rendered SVG: one stacked bar per hour
 * (successes below, failures on top, scaled to the busiest hour), every bar with a <title> for
 * pointer users, and the whole chart an image (`role="img"`) labelled by its <title> and <desc>,
 * the desc stating the totals. The same figures follow as a table (the non-visual alternative, and
 * what the tests read). No inline style: colours come from the `.chart-*` classes of the style sheet.
 */
export function deliveryChart(hours: readonly HourOfAttempts[], id = "delivery-chart"): SafeHtml {
  const succeeded = hours.reduce((sum, hour) => sum + hour.succeeded, 0);
  const failed = hours.reduce((sum, hour) => sum + hour.failed, 0);
  const peak = Math.max(0, ...hours.map((hour) => hour.succeeded + hour.failed));
  const busiest = Math.max(1, peak);
  const slot = WIDTH / Math.max(1, hours.length);
  const plot = HEIGHT - AXIS;
  const first = hours[0]?.start;
  const summary =
    first === undefined
      ? "No figures for the last 24 hours."
      : `Attempts per hour from ${utcText(new Date(first))} for 24 hours: ${succeeded} succeeded, ${failed} failed; ` +
        `the busiest hour had ${peak} attempts.`;
  const bars = hours.map((hour, index) => {
    const x = (index * slot + GAP / 2).toFixed(1);
    const width = (slot - GAP).toFixed(1);
    const okHeight = (hour.succeeded / busiest) * plot;
    const failedHeight = (hour.failed / busiest) * plot;
    const okY = plot - okHeight;
    const failedY = okY - failedHeight;
    return html`<g
      class="chart-hour"
      data-hour="${hour.start}"
      data-succeeded="${hour.succeeded}"
      data-failed="${hour.failed}"
    >
      <title>${hourLabel(hour.start)} UTC: ${hour.succeeded} succeeded, ${hour.failed} failed</title>
      <rect class="chart-succeeded" x="${x}" y="${okY.toFixed(1)}" width="${width}" height="${okHeight.toFixed(1)}" />
      <rect
        class="chart-failed"
        x="${x}"
        y="${failedY.toFixed(1)}"
        width="${width}"
        height="${failedHeight.toFixed(1)}"
      />
      ${index % 3 === 0 && html`<text class="chart-label" x="${x}" y="${HEIGHT - 6}">${hourLabel(hour.start)}</text>`}
    </g>`;
  });
  return html`<figure class="chart" id="${id}">
    <svg
      role="img"
      aria-labelledby="${id}-title ${id}-desc"
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      width="100%"
      preserveAspectRatio="xMidYMid meet"
    >
      <title id="${id}-title">Successes and failures per hour, last 24 hours</title>
      <desc id="${id}-desc">${summary}</desc>
      <line class="chart-axis" x1="0" y1="${plot}" x2="${WIDTH}" y2="${plot}" />
      ${bars}
    </svg>
    <figcaption>
      <span class="legend chart-succeeded-key">Succeeded: ${succeeded}</span>
      <span class="legend chart-failed-key">Failed: ${failed}</span>
      (hours in UTC)
    </figcaption>
    <details>
      <summary>The figures as a table</summary>
      <table id="${id}-table">
        <caption>
          Attempts per hour (UTC)
        </caption>
        <thead>
          <tr>
            <th scope="col">Hour starting</th>
            <th scope="col">Succeeded</th>
            <th scope="col">Failed</th>
          </tr>
        </thead>
        <tbody>
          ${hours.map(
            (hour) =>
              html`<tr data-hour="${hour.start}">
                <th scope="row">${utcText(new Date(hour.start))}</th>
                <td>${hour.succeeded}</td>
                <td>${hour.failed}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </details>
  </figure>`;
}
