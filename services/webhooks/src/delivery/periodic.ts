/** The periodic loops of the service (sweeper, janitor, backlog gauges) run through `every`. */
export interface Periodic {
  stop(): Promise<void>;
}

/** Runs `task` every `intervalMs` (never two at once), logging failures; stop() awaits the one running. */
export function every(intervalMs: number, task: () => Promise<void>): Periodic {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = task().finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
