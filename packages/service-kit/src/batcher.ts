/**
 * Gathers calls that arrive together into one (group commit in the application): when fewer than
 * `maxInFlight` batches are running, a call goes out with the calls of the same turn of the event
 * loop (setImmediate: no timer, an idle path adds no delay); otherwise it waits for a running
 * batch to finish and goes with every call queued by then (up to `maxBatch` in one batch), so a
 * busy path shares statements and commits among the calls that arrived during the last.
 *
 * `run` answers each item of its batch, in order, with a value or an Error (that item's alone);
 * when `run` itself throws, every call of the batch is rejected with that error.
 */
export interface BatcherOptions<T, R> {
  maxBatch: number;
  maxInFlight: number;
  run(items: T[]): Promise<Array<R | Error>>;
  /** Told the size of every batch that goes out (a metric). */
  onBatch?(size: number): void;
}

interface Waiting<T, R> {
  item: T;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export function createBatcher<T, R>(options: BatcherOptions<T, R>): (item: T) => Promise<R> {
  const maxBatch = Math.max(1, Math.floor(options.maxBatch));
  const maxInFlight = Math.max(1, Math.floor(options.maxInFlight));
  const queue: Waiting<T, R>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const next = (): void => {
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      inFlight++;
      options.onBatch?.(batch.length);
      // A run that throws before its promise is as one that rejects.
      Promise.resolve()
        .then(() => options.run(batch.map((waiting) => waiting.item)))
        .then(
          (results) => {
            batch.forEach((waiting, i) => {
              const result = results[i];
              if (result instanceof Error) waiting.reject(result);
              else if (i >= results.length)
                waiting.reject(new Error(`batch answered ${results.length} of ${batch.length}`));
              else waiting.resolve(result as R);
            });
          },
          (error: unknown) => batch.forEach((waiting) => waiting.reject(error)),
        )
        .finally(() => {
          inFlight--;
          next();
        });
    }
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (scheduled || inFlight >= maxInFlight) return;
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        next();
      });
    });
}
