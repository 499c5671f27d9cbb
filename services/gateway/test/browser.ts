import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";

/**
 * A real browser for the console's tests: Debian's Chromium (/usr/bin/chromium, never a browser
 * download) driven by playwright-core, axe-core run in every page checked, screenshots at the
 * widths the console is designed for, and a keyboard-only driver.
 */
export const CHROMIUM = "/usr/bin/chromium";

export const chromiumAvailable = (): boolean => existsSync(CHROMIUM);

/**
 * Why the browser test does not run here, or undefined when it does: it is skipped (with this
 * reason) only when Chromium is absent and CI is not set; under CI a missing Chromium fails it.
 */
export function browserSkipReason(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (chromiumAvailable() || env.CI === "true") return undefined;
  return `${CHROMIUM} is missing (Debian package chromium; .ci/install-chromium installs it)`;
}

/**
 * The flags of a headless Chromium on a machine without network access beyond localhost: no
 * background connections, no component updates, no sync. playwright-core gives every launch a new
 * empty profile directory (its own --user-data-dir) and runs it headless.
 */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 });
}

const repo = join(import.meta.dirname, "..", "..", "..");
/**
 * Where the screenshots go: docs/console/ (shown in docs/console.md) when the run is asked to
 * update them (CONSOLE_SCREENSHOTS=update), else a temp folder, so an ordinary run changes no
 * committed file.
 */
export const SCREENSHOT_DIR =
  process.env.CONSOLE_SCREENSHOTS === "update" ? join(repo, "docs", "console") : join(tmpdir(), "console-screenshots");
const axePath = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** The axe rule sets run: WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices. */
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

/** One axe finding, trimmed to what a failure message needs. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * The rules whose findings fail a page whatever their impact: `landmark-unique` (moderate) says
 * two landmarks share a role and name (a section and the table region inside it, both named by
 * the same heading), which leaves screen-reader users two identical entries in the landmark list.
 */
const ALWAYS_FAILING_RULES = new Set(["landmark-unique"]);

/**
 * Runs axe-core (WCAG 2.0/2.1/2.2 A and AA rules and best practices) in the page and answers the
 * serious and critical violations, and those of ALWAYS_FAILING_RULES. axe is added as a script tag
 * from node_modules; the console's CSP allows only its own scripts, so the test contexts are opened
 * with bypassCSP (consoleContext).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) await page.addScriptTag({ path: axePath });
  // A string, evaluated in the page (this file is compiled without the DOM's types).
  const violations = await page.evaluate<AxeViolation[]>(`window.axe
    .run(document, {
      runOnly: { type: "tag", values: ${JSON.stringify(AXE_TAGS)} },
      resultTypes: ["violations"],
    })
    .then((results) => results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(" ")),
    })))`);
  return violations.filter(
    (violation) =>
      violation.impact === "serious" || violation.impact === "critical" || ALWAYS_FAILING_RULES.has(violation.id),
  );
}

/** Fails with the violations listed when the page has any serious or critical one. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const violations = await seriousViolations(page);
  if (violations.length > 0) {
    const lines = violations.map((v) => `- ${v.id} (${v.impact}): ${v.help} at ${v.targets.join(", ")}`);
    throw new Error(`axe found serious, critical or landmark-unique violations on ${label}:\n${lines.join("\n")}`);
  }
}

/** The widths every console page is checked and photographed at: a laptop and a phone. */
export const SCREEN_WIDTHS = [1280, 390] as const;

/**
 * Screenshots of the page at each width (docs/console/<name>-<width>.png), the height of the
 * viewport only (a page's top, where its purpose shows), so the files stay small. The page's
 * layout at each width is also checked: nothing may overflow the viewport sideways.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  // The phone first, so the page ends at the laptop's width the tests use, with no extra relayout.
  for (const width of [...SCREEN_WIDTHS].reverse()) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    await page.evaluate("window.scrollTo(0, 0)");
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    if (overflow > 1) {
      // The outermost elements that stick out, to say what to fix.
      const culprits = await page.evaluate<string[]>(`[...document.querySelectorAll("body *")]
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
        .filter((el) => !(el.parentElement && el.parentElement.getBoundingClientRect().right > window.innerWidth + 1))
        .slice(0, 5)
        .map((el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + el.className : ""))`);
      throw new Error(`${name} overflows a ${width} px wide screen by ${overflow} px: ${culprits.join(", ")}`);
    }
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${width}.png`), animations: "disabled" });
  }
}

/** How a page's width measured at one viewport width (fitsAt). */
export interface Fit {
  width: number;
  /** document.documentElement.scrollWidth: more than `width` means the page scrolls sideways. */
  scrollWidth: number;
  /** The tables (by id) wider than the box they sit in, or sticking out of the viewport: cut off. */
  cutTables: string[];
}

/**
 * The page at each of SCREEN_WIDTHS (the phone first, ending at the laptop's width): its
 * scrollWidth and any table wider than its box. A page that fits answers scrollWidth <= width and
 * no cut tables at both.
 */
export async function fitsAt(page: Page): Promise<Fit[]> {
  const fits: Fit[] = [];
  for (const width of [...SCREEN_WIDTHS].reverse()) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    fits.push(
      await page.evaluate<Fit>(`({
        width: window.innerWidth,
        scrollWidth: document.documentElement.scrollWidth,
        cutTables: [...document.querySelectorAll("main table")]
          .filter((table) => table.scrollWidth > table.parentElement.clientWidth + 1
            || table.getBoundingClientRect().right > window.innerWidth + 1)
          .map((table) => table.id || "(a table without id)"),
      })`),
    );
  }
  return fits;
}

export interface ContextOptions {
  javaScriptEnabled?: boolean;
  axe?: boolean;
  timezoneId?: string;
}

/**
 * A context for one console user: its own cookies, English, UTC unless `timezoneId` names another
 * zone (the times test). `axe: true` lets axe's script tag
 * past the console's CSP (bypassCSP); other contexts keep the CSP enforced, so a page that needed
 * an inline script or style would break there (and report a violation, see cspViolations).
 */
export function consoleContext(
  browser: Browser,
  baseURL: string,
  options: ContextOptions = {},
): Promise<BrowserContext> {
  return browser.newContext({
    baseURL,
    bypassCSP: options.axe ?? false,
    locale: "en-GB",
    timezoneId: options.timezoneId ?? "UTC",
    viewport: { width: 1280, height: 800 },
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
}

/**
 * The keyboard alone: presses Tab until the focused element matches `selector` (at most `limit`
 * presses), so a flow proves every control it uses is reachable in the tab order.
 */
export async function tabTo(page: Page, selector: string, limit = 60): Promise<void> {
  for (let presses = 0; presses < limit; presses++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate<boolean>(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return;
  }
  throw new Error(`${selector} was not reached with ${limit} presses of Tab`);
}

/** Collects the page's Content-Security-Policy violations reported on its console. */
export function cspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) seen.push(message.text());
  });
  return seen;
}

/** The element's rendered text, once it is in the page (waits for it like every locator). */
export const textOf = (locator: Locator): Promise<string> => locator.innerText();

/** The focused element's text. */
export const focusedText = (page: Page): Promise<string> =>
  page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''");
