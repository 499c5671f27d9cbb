/**
 * Text the gateway accepts must be well-formed Unicode. JSON can spell a lone UTF-16 surrogate
 * (`"\ud800"`), which JavaScript parses into a string that cannot be encoded as UTF-8: passed on,
 * it would silently become U+FFFD. Every JSON body is checked here, so every text field of both
 * interfaces is covered, present and future.
 */

/** An unpaired surrogate; the same test as String.prototype.isWellFormed (ES2024). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Listing stops here: enough to name the problem, bounded for a hostile body. */
const MAX_REPORTED = 5;
const MAX_FIELD_LENGTH = 100;

export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/**
 * The fields of a parsed JSON value (`name`, `tags[2]`, `a.b`) whose text, or key, is not
 * well-formed. Iterative, so a deeply nested body cannot overflow the stack.
 */
export function illFormedTextFields(value: unknown): string[] {
  const found: string[] = [];
  const pending: { value: unknown; path: string }[] = [{ value, path: "" }];
  while (pending.length > 0 && found.length < MAX_REPORTED) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === "string") {
      if (!isWellFormedText(current)) found.push(shorten(path) || "the body");
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], path: `${path}[${i}]` });
    } else if (typeof current === "object" && current !== null) {
      const entries = Object.entries(current as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const field = path ? `${path}.${printable(key)}` : printable(key);
        if (!isWellFormedText(key)) found.push(`the key of ${shorten(field)}`);
        else pending.push({ value: child, path: field });
      }
    }
  }
  return found.slice(0, MAX_REPORTED);
}

/** A field name safe to echo in a message: lone surrogates spelled as \uXXXX escapes. */
function printable(key: string): string {
  return key.replace(/\p{Surrogate}/gu, (s) => `\\u${s.charCodeAt(0).toString(16)}`);
}

function shorten(field: string): string {
  return field.length > MAX_FIELD_LENGTH ? `${field.slice(0, MAX_FIELD_LENGTH)}…` : field;
}
