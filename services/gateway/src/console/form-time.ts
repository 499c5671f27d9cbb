/**
 * A time a console form names (the recover form's `since`, the message log's range): a datetime-local value (read as UTC, as the label says) or an
 * RFC 3339 time with a zone; answered as RFC 3339 UTC.
 */
export function formUtcTime(value: string): string | undefined {
  const text = value.trim();
  const local = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(text);
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text);
  if (!local && !zoned) return undefined;
  const date = new Date(local ? `${text}Z` : text);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
