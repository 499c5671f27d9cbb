import type { DownstreamCheck } from "@platform/service-kit/downstream-view";
import type { Knex } from "knex";

/**
 * A check of the gateway's database for its DownstreamView: `select 1` answered within the
 * deadline is SERVING, else UNREACHABLE. At most one query is in flight: while Postgres does not
 * answer, each check waits on the same one instead of queueing more on the pool.
 */
export function databaseCheck(db: Knex): DownstreamCheck {
  let pending: Promise<boolean> | undefined;
  return (timeoutMs) => {
    const query = (pending ??= db.raw("select 1").then(
      () => true,
      () => false,
    ));
    void query.then(() => {
      if (pending === query) pending = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    return Promise.race([query, deadline]).then((answered) => {
      clearTimeout(timer);
      return answered ? "SERVING" : "UNREACHABLE";
    });
  };
}
