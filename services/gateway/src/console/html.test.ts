import { describe, expect, it } from "vitest";
// `h` is html``: under another name prettier leaves the templates (and so the expected markup) as written.
import { escapeHtml, html as h, isSafeUrl, join, raw, SafeHtml, UnsafeTemplateError } from "./html.js";

const attack = `<script>alert("x")</script>' onmouseover='alert(1)`;

describe("html``", () => {
  it("escapes text interpolations", () => {
    expect(String(h`<p>${attack}</p>`)).toBe(
      "<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;alert(1)</p>",
    );
  });

  it("escapes double- and single-quoted attribute values, so a value cannot leave its quotes", () => {
    expect(String(h`<input value="${attack}">`)).toBe(
      '<input value="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;alert(1)">',
    );
    expect(String(h`<input value='${`' autofocus onfocus='x`}'>`)).toBe(
      "<input value='&#39; autofocus onfocus=&#39;x'>",
    );
    expect(String(h`<a title="${"`&"}" class="a ${"b"} c">x</a>`)).toBe('<a title="&#96;&amp;" class="a b c">x</a>');
  });

  it("renders numbers, true and arrays; false, null and undefined render nothing", () => {
    const items = ["a<", "b"];
    expect(String(h`<ul>${items.map((i) => h`<li>${i}</li>`)}</ul>`)).toBe("<ul><li>a&lt;</li><li>b</li></ul>");
    expect(String(h`${1}|${10n}|${true}|${false}|${null}|${undefined}|${[]}`)).toBe("1|10|true||||");
    const admin = false as boolean;
    expect(String(h`<nav>${admin && h`<a href="/users">Users</a>`}</nav>`)).toBe("<nav></nav>");
  });

  it("inserts SafeHtml fragments (nested html`` and raw) as they are", () => {
    const inner = h`<b>${"<i>"}</b>`;
    expect(String(h`<p>${inner}${raw("&nbsp;")}</p>`)).toBe("<p><b>&lt;i&gt;</b>&nbsp;</p>");
    expect(h`x`).toBeInstanceOf(SafeHtml);
    expect(String(join([h`<li>1</li>`, h`<li>2</li>`], raw("\n")))).toBe("<li>1</li>\n<li>2</li>");
  });

  it("refuses a fragment inside an attribute value", () => {
    expect(() => h`<a title="${h`<b>x</b>`}">`).toThrow(UnsafeTemplateError);
  });

  it("refuses unquoted attribute values and values in tag position", () => {
    expect(() => h`<input value=${"x onfocus=alert(1)"}>`).toThrow(UnsafeTemplateError);
    expect(() => h`<input ${"onfocus=alert(1)"}>`).toThrow(UnsafeTemplateError);
    expect(() => h`<${"script"}>`).toThrow(UnsafeTemplateError);
  });

  it("refuses event handler, style and srcdoc attributes, comments, <script> and <style>", () => {
    expect(() => h`<button onclick="go('${"x"}')">`).toThrow(/onclick/);
    expect(() => h`<p style="color: ${"red"}">`).toThrow(/style/);
    expect(() => h`<iframe srcdoc="${"<p>"}">`).toThrow(UnsafeTemplateError);
    expect(() => h`<!-- ${"x"} -->`).toThrow(/comment/);
    expect(() => h`<script>var x = "${"y"}";</script>`).toThrow(/script/);
    expect(() => h`<style>p { color: ${"red"} }</style>`).toThrow(/style/);
  });

  it("is back in text after a comment, a script element or a tag closes", () => {
    expect(String(h`<!-- c --><p>${"<"}</p>`)).toBe("<!-- c --><p>&lt;</p>");
    expect(String(h`<script src="/a.js"></script><p>${"<"}</p>`)).toBe('<script src="/a.js"></script><p>&lt;</p>');
    expect(String(h`<input type="checkbox" checked><p title="${"t"}">${"<"}</p>`)).toBe(
      '<input type="checkbox" checked><p title="t">&lt;</p>',
    );
    expect(String(h`<p a='"' b="'">${"<"}</p>`)).toBe(`<p a='"' b="'">&lt;</p>`);
  });

  it("neutralises unsafe URLs at the start of URL attributes and keeps safe ones", () => {
    expect(String(h`<a href="${"javascript:alert(1)"}">x</a>`)).toBe('<a href="about:invalid#unsafe">x</a>');
    expect(String(h`<a href="${" JaVaScRiPt:alert(1)"}">x</a>`)).toBe('<a href="about:invalid#unsafe">x</a>');
    expect(String(h`<img src="${"data:image/svg+xml,<svg>"}">`)).toBe('<img src="about:invalid#unsafe">');
    expect(String(h`<form action="${"//evil.example/x"}">`)).toBe('<form action="about:invalid#unsafe">');
    expect(String(h`<button hx-post="${"vbscript:x"}">`)).toBe('<button hx-post="about:invalid#unsafe">');
    expect(String(h`<a href="${"/console/webhooks?a=1&b=2"}">x</a>`)).toBe(
      '<a href="/console/webhooks?a=1&amp;b=2">x</a>',
    );
    expect(String(h`<a href="https://x.example/${"javascript:1"}">x</a>`)).toBe(
      '<a href="https://x.example/javascript:1">x</a>',
    );
    expect(String(h`<a href="/console/webhooks/${"ep_1"}">x</a>`)).toBe('<a href="/console/webhooks/ep_1">x</a>');
  });

  it("survives the reformatting prettier gives console templates (attributes on their own lines, />)", () => {
    expect(
      String(h`<input
        type="text"
        value="${'"><script>'}"
      />`),
    ).toBe(`<input
        type="text"
        value="&quot;&gt;&lt;script&gt;"
      />`);
  });
});

describe("URLs and escaping", () => {
  it.each(["/console", "?page=2", "#main", "webhooks/ep_1", "../x", "https://a.example/b", "mailto:a@b.example", ""])(
    "%s is a safe URL",
    (url) => expect(isSafeUrl(url)).toBe(true),
  );
  it.each([
    "javascript:alert(1)",
    "data:text/html,x",
    "//evil.example",
    "/\\evil.example",
    "vbscript:x",
    "java\\script:x",
  ])("%s is not a safe URL", (url) => expect(isSafeUrl(url)).toBe(false));
  it("escapes the five HTML specials and the backtick", () => {
    expect(escapeHtml(`&<>"'\``)).toBe("&amp;&lt;&gt;&quot;&#39;&#96;");
  });
});
