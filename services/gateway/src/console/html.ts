/**
 * HTML for the console's pages, escaped by default. `html\`...\`` escapes every interpolation for
 * the place it stands in (text or a quoted attribute value) and refuses, by throwing, the places
 * where escaping cannot make a value safe: an unquoted attribute value, an attribute name or tag
 * position, an event handler (`on...`) or `style` attribute, a comment, a <script> or <style>
 * element. URL attributes (href, src, action, formaction, the hx-* verbs) take only relative URLs
 * and http(s)/mailto ones; anything else (`javascript:`, `data:`) becomes `about:invalid#unsafe`.
 *
 * Trusted fragments are SafeHtml: another `html\`\`` result, or `raw(text)` for markup the code
 * itself wrote (never for anything that came from a request or a service).
 */

/** Markup that is safe to insert as it is. Only `html` and `raw` make one. */
export class SafeHtml {
  /** @internal use html`` or raw() */
  constructor(private readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** What may stand in a `${}` of html``: false, null and undefined render nothing (for `${cond && html`...`}`). */
export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

/** Trusted markup written by the code itself: inserted without escaping. */
export const raw = (markup: string): SafeHtml => new SafeHtml(markup);

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

const URL_ATTRIBUTES = new Set([
  "href",
  "src",
  "action",
  "formaction",
  "poster",
  "cite",
  "hx-get",
  "hx-post",
  "hx-put",
  "hx-patch",
  "hx-delete",
  "hx-push-url",
  "hx-replace-url",
]);

/** Relative (not protocol-relative) URLs, and absolute http(s) and mailto ones. */
export function isSafeUrl(url: string): boolean {
  const trimmed = url.trim();
  if (/^(\/(?![/\\])|[?#]|\.{1,2}\/)/.test(trimmed) || trimmed === "/" || trimmed === "") return true;
  if (/^(https?:\/\/|mailto:)/i.test(trimmed)) return true;
  // A relative path without a scheme: no colon before the first /, ? or #.
  return /^[^:/?#\\]+([/?#]|$)/.test(trimmed) && !trimmed.includes("\\");
}

/** Where an interpolation stands, found by scanning the template's static text before it. */
type Place =
  | { kind: "text" }
  | { kind: "tag" }
  | { kind: "unquoted-value" }
  | { kind: "value"; attribute: string; quote: '"' | "'"; atStart: boolean }
  | { kind: "comment" }
  | { kind: "raw-text"; element: string };

class Scanner {
  private state:
    | "text"
    | "tag-open"
    | "tag-name"
    | "in-tag"
    | "attr-name"
    | "after-attr-name"
    | "before-value"
    | "value"
    | "unquoted-value"
    | "comment"
    | "raw-text" = "text";
  private tagName = "";
  private closing = false;
  private attribute = "";
  private quote: '"' | "'" = '"';
  private valueLength = 0;
  private rawElement = "";
  private pending = "";

  /** Feeds static text (interpolated values are not fed: they never change the place). */
  feed(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      switch (this.state) {
        case "text":
          if (c === "<") {
            if (text.startsWith("<!--", i)) {
              this.state = "comment";
              i += 3;
            } else this.state = "tag-open";
          }
          break;
        case "tag-open":
          this.closing = c === "/";
          this.tagName = this.closing ? "" : c.toLowerCase();
          this.state = /[A-Za-z/!?]/.test(c) ? "tag-name" : "text";
          break;
        case "tag-name":
          if (/\s/.test(c)) this.state = "in-tag";
          else if (c === ">") this.closeTag();
          else if (c !== "/") this.tagName += c.toLowerCase();
          break;
        case "in-tag":
          if (c === ">") this.closeTag();
          else if (!/[\s/]/.test(c)) {
            this.attribute = c.toLowerCase();
            this.state = "attr-name";
          }
          break;
        case "attr-name":
          if (c === "=") this.state = "before-value";
          else if (c === ">") this.closeTag();
          else if (/\s/.test(c)) this.state = "after-attr-name";
          else this.attribute += c.toLowerCase();
          break;
        case "after-attr-name":
          if (c === "=") this.state = "before-value";
          else if (c === ">") this.closeTag();
          else if (!/\s/.test(c)) {
            this.attribute = c.toLowerCase();
            this.state = "attr-name";
          }
          break;
        case "before-value":
          if (c === '"' || c === "'") {
            this.quote = c;
            this.valueLength = 0;
            this.state = "value";
          } else if (c === ">") this.closeTag();
          else if (!/\s/.test(c)) this.state = "unquoted-value";
          break;
        case "value":
          if (c === this.quote) this.state = "in-tag";
          else this.valueLength++;
          break;
        case "unquoted-value":
          if (/\s/.test(c)) this.state = "in-tag";
          else if (c === ">") this.closeTag();
          break;
        case "comment":
          if (text.startsWith("-->", i)) {
            this.state = "text";
            i += 2;
          }
          break;
        case "raw-text":
          this.pending += c;
          if (this.pending.toLowerCase().endsWith(`</${this.rawElement}`)) {
            this.pending = "";
            this.tagName = this.rawElement;
            this.closing = true;
            this.state = "tag-name";
          }
          break;
      }
    }
  }

  private closeTag(): void {
    if (!this.closing && (this.tagName === "script" || this.tagName === "style")) {
      this.rawElement = this.tagName;
      this.pending = "";
      this.state = "raw-text";
    } else this.state = "text";
  }

  /** The place of an interpolation after the text fed so far. */
  place(): Place {
    switch (this.state) {
      case "text":
        return { kind: "text" };
      case "comment":
        return { kind: "comment" };
      case "raw-text":
        return { kind: "raw-text", element: this.rawElement };
      case "value":
        this.valueLength++; // what is interpolated now is part of the value
        return { kind: "value", attribute: this.attribute, quote: this.quote, atStart: this.valueLength === 1 };
      case "before-value":
      case "unquoted-value":
        return { kind: "unquoted-value" };
      default:
        return { kind: "tag" };
    }
  }
}

/** A bug in a template: thrown when the page is rendered, so a test of the page finds it. */
export class UnsafeTemplateError extends Error {
  override name = "UnsafeTemplateError";
}

function render(value: HtmlValue, place: Place): string {
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map((item) => render(item, place)).join("");
  if (value instanceof SafeHtml) {
    if (place.kind === "text" || place.kind === "tag") return value.toString();
    throw new UnsafeTemplateError(`an HTML fragment cannot stand in ${describe(place)}`);
  }
  const text = String(value);
  switch (place.kind) {
    case "text":
      return escapeHtml(text);
    case "value": {
      if (place.attribute.startsWith("on") || place.attribute === "style" || place.attribute === "srcdoc") {
        throw new UnsafeTemplateError(`a value cannot be interpolated into the ${place.attribute} attribute`);
      }
      if (URL_ATTRIBUTES.has(place.attribute) && place.atStart && !isSafeUrl(text)) {
        return "about:invalid#unsafe";
      }
      return escapeHtml(text);
    }
    default:
      throw new UnsafeTemplateError(`a value cannot stand in ${describe(place)}`);
  }
}

function describe(place: Place): string {
  switch (place.kind) {
    case "tag":
      return "a tag (as an attribute name or markup): use a quoted attribute value";
    case "unquoted-value":
      return "an unquoted attribute value: quote it";
    case "comment":
      return "an HTML comment";
    case "raw-text":
      return `a <${place.element}> element`;
    case "value":
      return `the ${place.attribute} attribute`;
    default:
      return "element text";
  }
}

/** The console's template tag: every interpolation escaped for its place (see the module comment). */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  const scanner = new Scanner();
  let out = "";
  for (let i = 0; i < strings.length; i++) {
    const text = strings[i]!;
    out += text;
    scanner.feed(text);
    if (i < values.length) out += render(values[i], scanner.place());
  }
  return new SafeHtml(out);
}

/** Joins fragments (a list of rows, say) with an optional separator of trusted markup. */
export function join(fragments: readonly SafeHtml[], separator: SafeHtml = raw("")): SafeHtml {
  return raw(fragments.map(String).join(separator.toString()));
}
