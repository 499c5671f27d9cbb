/**
 * A minimal browser for the console's HTTP tests: a cookie jar (by name, honouring deletion),
 * no automatic redirects (tests assert each 303), forms sent urlencoded, and the CSRF token read
 * from the last page's hidden input.
 */
export interface Page {
  status: number;
  headers: Headers;
  text: string;
  /** The Location of a redirect, "" otherwise. */
  location: string;
}

export class ConsoleBrowser {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie header received, raw, in order. */
  readonly setCookies: string[] = [];
  /** The CSRF token of the last page that had one. */
  csrf = "";

  constructor(
    private readonly baseUrl: () => string,
    /** Headers sent with every request (X-Forwarded-Proto, X-Forwarded-For...). */
    readonly headers: Record<string, string> = {},
  ) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = /expires=Thu, 01 Jan 1970/i.test(line) || /max-age=0/i.test(line) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(
    method: string,
    path: string,
    init: { form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Page> {
    const headers: Record<string, string> = { ...this.headers, ...init.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    let body: string | undefined;
    if (init.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(`${this.baseUrl()}${path}`, { method, headers, body, redirect: "manual" });
    this.remember(res);
    const text = await res.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (csrf) this.csrf = csrf;
    return { status: res.status, headers: res.headers, text, location: res.headers.get("location") ?? "" };
  }

  /** The origin the browser is on: https when a proxy in front says so (X-Forwarded-Proto). */
  origin(): string {
    const url = new URL(this.baseUrl());
    return this.headers["x-forwarded-proto"] === "https" ? `https://${url.host}` : url.origin;
  }

  get(path: string, headers?: Record<string, string>): Promise<Page> {
    return this.request("GET", path, { headers });
  }

  /** POSTs a form with the current CSRF token (unless the form sets _csrf itself) and this origin. */
  post(path: string, form: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Page> {
    return this.request("POST", path, {
      form: { _csrf: this.csrf, ...form },
      headers: { origin: this.origin(), "sec-fetch-site": "same-origin", ...headers },
    });
  }
}

/** The path of an absolute URL the CLI or the API printed (its origin is the gateway's). */
export const pathOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};
