import { randomUUID } from "node:crypto";
import type { Flash } from "../db/console-store.js";
import { roleReaches, type ConsoleRole, type ConsoleViewer } from "../domain/console-role.js";
import type { ConsoleAsset, ConsoleAssetName } from "./assets.js";
import { html, type SafeHtml } from "./html.js";

/** The form field that carries the CSRF token (the router also reads the X-CSRF-Token header). */
export const CSRF_FIELD = "_csrf";
export const CSRF_HEADER = "x-csrf-token";

/** The hidden input every console form carries: `<form method="post">${csrfField(request.csrfToken)}...`. */
export const csrfField = (token: string): SafeHtml =>
  html`<input type="hidden" name="${CSRF_FIELD}" value="${token}" />`;

/** The form field that carries a mutation's Idempotency-Key (idempotencyField, formIdempotencyKey). */
export const IDEMPOTENCY_FIELD = "_idempotency";

/**
 * The hidden Idempotency-Key of a form that mutates (create, rotate, redrive...): a new key each
 * time the form is rendered, so a resubmitted or double-clicked form repeats the same command (the
 * service replays it) while a form filled in again is a new one. Read it with formIdempotencyKey.
 */
export const idempotencyField = (): SafeHtml =>
  html`<input type="hidden" name="${IDEMPOTENCY_FIELD}" value="${`console-${randomUUID()}`}" />`;

/** An RFC 3339 time as the server shows it: UTC, seconds precision ("2026-11-24 12:00:05 UTC"). */
export function utcText(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/**
 * A point in time: `<time datetime="...Z">... UTC</time>`. The served script shows it in the
 * viewer's time zone and keeps the UTC text as the title (on hover); without script it stays UTC.
 * Accepts a Date or an RFC 3339 string (as the services answer); "" or invalid renders "—".
 */
export function time(value: Date | string | undefined | null): SafeHtml {
  if (value === undefined || value === null || value === "") return html`<span>—</span>`;
  const date = typeof value === "string" ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) return html`<span>—</span>`;
  return html`<time datetime="${date.toISOString()}">${utcText(date)}</time>`;
}

/** One entry of the console's navigation, shown to users with at least `role`. */
export interface NavItem {
  href: string;
  label: string;
  role: ConsoleRole;
}

/**
 * The console's navigation, in order. A page adds its entry here; hiding an entry is a courtesy,
 * the router's role check is the rule.
 */
export const consoleNav: NavItem[] = [
  { href: "/console", label: "Home", role: "viewer" },
  { href: "/console/attention", label: "Attention", role: "viewer" },
  { href: "/console/webhooks", label: "Webhooks", role: "viewer" },
  { href: "/console/webhooks/messages", label: "Message log", role: "viewer" },
  { href: "/console/tenant", label: "Tenant", role: "viewer" },
  { href: "/console/users", label: "Users", role: "owner" },
];

export interface ShellOptions {
  title: string;
  body: SafeHtml;
  /** The signed-in user; absent on the sign-in pages. */
  viewer: ConsoleViewer | undefined;
  csrfToken: string;
  flash: Flash | undefined;
  /** The request path, to mark the current nav entry. */
  path: string;
  assets: Record<ConsoleAssetName, ConsoleAsset>;
}

function navOf(viewer: ConsoleViewer, path: string): SafeHtml {
  const items = consoleNav.filter((item) => roleReaches(viewer.role, item.role));
  return html`<nav aria-label="Console">
    <ul>
      ${items.map(
        (item) =>
          html`<li>
            <a href="${item.href}" aria-current="${item.href === path ? "page" : "false"}">${item.label}</a>
          </li>`,
      )}
    </ul>
  </nav>`;
}

const script = (asset: ConsoleAsset) =>
  html`<script src="${asset.path}" integrity="${asset.integrity}" crossorigin="anonymous" defer></script>`;

/**
 * The page shell around every console page: skip link, header with navigation and the user's
 * sign-out form, flash message, <main>. No inline script or style anywhere (the CSP forbids them):
 * htmx and console-script.js are served files with integrity attributes, htmx configured by a <meta>.
 */
export function renderShell(options: ShellOptions): string {
  const { viewer, assets } = options;
  const header = viewer
    ? html`<header class="console">
        <strong>Console</strong>
        ${navOf(viewer, options.path)}
        <div class="who">
          <span>${viewer.email} (${viewer.role}) · tenant ${viewer.tenantId}</span>
          <form method="post" action="/console/logout">
            ${csrfField(options.csrfToken)}
            <button type="submit">Sign out</button>
          </form>
        </div>
      </header>`
    : html`<header class="console"><strong>Console</strong></header>`;
  const flash =
    options.flash &&
    html`<div class="flash ${options.flash.kind}" role="${options.flash.kind === "error" ? "alert" : "status"}">
      ${options.flash.text}
    </div>`;
  const document = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="csrf-token" content="${options.csrfToken}" />
        <meta name="htmx-config" content="${JSON.stringify(HTMX_CONFIG)}" />
        <title>${options.title} · Console</title>
        <link rel="icon" href="${assets["favicon.ico"].path}" sizes="32x32" type="image/x-icon" />
        <link
          rel="stylesheet"
          href="${assets["console-style.css"].path}"
          integrity="${assets["console-style.css"].integrity}"
          crossorigin="anonymous"
        />
        ${script(assets["htmx.min.js"])} ${script(assets["console-script.js"])}
      </head>
      <body hx-boost="true">
        <a class="skip-link" href="#main">Skip to content</a>
        ${header}
        <main id="main" tabindex="-1">
          ${flash}
          <h1>${options.title}</h1>
          ${options.body}
        </main>
      </body>
    </html> `;
  return document.toString();
}

/**
 * htmx under a CSP without 'unsafe-inline' or 'unsafe-eval', answers of any status swapped in; no injected indicator <style> (the
 * style sheet has the rules), no eval (hx-on, js: values), no <script> in swapped content, and
 * requests only to this origin.
 */
const HTMX_CONFIG = {
  // Refusals (a form with errors: 400, 403, 409, 429) are whole pages too: swap them in, as a
  // browser without JavaScript would show them.
  responseHandling: [
    { code: "204", swap: false },
    { code: "...", swap: true },
  ],
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
};
