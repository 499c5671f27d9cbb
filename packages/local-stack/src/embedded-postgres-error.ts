/** The embedded Postgres did not initialise or start; the message carries the postmaster's own words. */
export class EmbeddedPostgresError extends Error {
  override name = "EmbeddedPostgresError";
  constructor(
    message: string,
    /** The port it was started on (undefined for initdb). */
    readonly port: number | undefined,
    /** The last lines the process logged. */
    readonly log: string[],
    /** True when the port was taken by another socket (a listener, or a connection's local port). */
    readonly portInUse = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
