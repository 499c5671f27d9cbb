/** The operator asked for something that cannot be done as asked: exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Postgres or a service did not answer: exit 1, with the address tried and what to do. */
export class StackDownError extends Error {
  override name = "StackDownError";
  constructor(what: string, address: string, cause: unknown) {
    const reason = cause instanceof Error && cause.message ? ` (${cause.message.split("\n")[0]})` : "";
    super(`the stack seems down: could not reach ${what} at ${address}${reason}; run \`npm start\``, { cause });
  }
}
