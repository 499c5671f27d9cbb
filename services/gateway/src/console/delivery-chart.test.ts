import { describe, expect, it } from "vitest";
import { deliveryChart } from "./delivery-chart.js";

const hours = Array.from({ length: 24 }, (_, i) => ({
  start: new Date(Date.UTC(2026, 10, 24, i)).toISOString(),
  succeeded: i === 5 ? 3 : i === 6 ? 1 : 0,
  failed: i === 6 ? 1 : 0,
}));

describe("the hourly attempts chart", () => {
  const markup = deliveryChart(hours).toString();

  it("is an image labelled by its title and a description with the totals", () => {
    expect(markup).toMatch(/<svg\s+role="img"\s+aria-labelledby="delivery-chart-title delivery-chart-desc"/);
    expect(markup).toContain("4 succeeded, 1 failed; the busiest hour had 3 attempts.");
  });

  it("scales each hour's bars to the busiest hour and lists the same figures in a table", () => {
    const heights = (kind: string) =>
      [...markup.matchAll(new RegExp(`<rect\\s+class="chart-${kind}"[^>]*height="([\\d.]+)"`, "g"))].map((m) =>
        Number(m[1]),
      );
    expect(heights("succeeded")[5]).toBeCloseTo(176);
    expect(heights("succeeded")[6]).toBeCloseTo(176 / 3, 0);
    expect(heights("failed")[6]).toBeCloseTo(176 / 3, 0);
    expect(heights("succeeded").filter((h) => h > 0)).toHaveLength(2);
    const rows = [
      ...markup.matchAll(/<tr data-hour="([^"]+)">\s*<th scope="row">[^<]+<\/th>\s*<td>(\d+)<\/td>\s*<td>(\d+)<\/td>/g),
    ];
    expect(rows.map((m) => [m[1], Number(m[2]), Number(m[3])])).toEqual(
      hours.map((h) => [h.start, h.succeeded, h.failed]),
    );
  });

  it("draws an empty day without dividing by zero", () => {
    const empty = deliveryChart(hours.map((h) => ({ ...h, succeeded: 0, failed: 0 }))).toString();
    expect(empty).not.toContain("NaN");
    expect(empty).toContain("0 succeeded, 0 failed; the busiest hour had 0 attempts.");
  });
});
