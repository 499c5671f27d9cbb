import { spawnServiceProcess, type ListeningLine, type SpawnedServiceProcess } from "./service-process.js";

/** How a service that dies is brought back, like a kubelet's CrashLoopBackOff. */
export interface RestartPolicy {
  /** Wait before the first restart; doubles with each failure in a row. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A process that stayed up this long counts as healthy: the next failure starts over at initialDelayMs. */
  stableAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  stableAfterMs: 60_000,
};

/** The wait before a restart after `failuresInARow` (≥ 1) failures: 1s, 2s, 4s … capped at maxDelayMs. */
export function restartDelay(policy: RestartPolicy, failuresInARow: number): number {
  return Math.min(policy.initialDelayMs * 2 ** Math.max(0, failuresInARow - 1), policy.maxDelayMs);
}

export interface SupervisedService {
  name: string;
  /** The first start: its listening line, or a rejection when it exits or hangs before listening. */
  started: Promise<ListeningLine>;
  /** The process running now (or the one that last ran, or is starting). */
  current(): SpawnedServiceProcess;
  /** From now on a process that exits is restarted with backoff; until then its exit is reported to onEarlyExit. */
  heal(): void;
  /** Stops for good: no more restarts; SIGTERM, then SIGKILL after killAfterMs. */
  stop(): Promise<void>;
}

export interface SupervisionOptions {
  name: string;
  entry: string;
  env: Record<string, string>;
  /** Listening-line field -> the variable that asks for it: restarts ask for the port the first start got. */
  pinnedPorts: Record<string, string>;
  say(line: string): void;
  /** The service exited after listening but before heal(): the stack is not up, so the start failed. */
  onEarlyExit(reason: string): void;
  policy?: RestartPolicy;
  startTimeoutMs?: number;
  /** After SIGTERM, how long before SIGKILL (a service allows itself SHUTDOWN_DRAIN_DELAY + SHUTDOWN_GRACE + 2 s: locally 0 + 25 + 2). */
  killAfterMs?: number;
}

const exitReason = (code: number | string) => String(code);

/**
 * Runs one service under `npm start`: starts it, and once the stack is up restarts it whenever it
 * dies, on the same ports, waiting longer after each failure in a row and saying so.
 */
export function superviseService(options: SupervisionOptions): SupervisedService {
  const policy = options.policy ?? DEFAULT_RESTART_POLICY;
  const env = { ...options.env };
  let healing = false;
  let stopping = false;
  let failuresInARow = 0;
  let restartTimer: NodeJS.Timeout | undefined;

  const spawnOnce = () => {
    const spawned = spawnServiceProcess({
      name: options.name,
      entry: options.entry,
      env,
      timeoutMs: options.startTimeoutMs,
      inheritOutput: true,
      ownProcessGroup: true,
    });
    options.say(`starting ${options.name} (pid ${spawned.pid})`);
    return spawned;
  };

  let current = spawnOnce();
  const watch = (spawned: SpawnedServiceProcess) => {
    let listeningSince: number | undefined;
    spawned.listening.then(
      () => {
        listeningSince = Date.now();
      },
      () => undefined,
    );
    void spawned.exited.then((code) => {
      if (stopping || spawned !== current) return;
      if (!healing) {
        // Before listening, `started` rejects with the process's last lines instead.
        if (listeningSince !== undefined)
          options.onEarlyExit(`${options.name} exited (${exitReason(code)}) while the stack was starting`);
        return;
      }
      if (listeningSince !== undefined && Date.now() - listeningSince >= policy.stableAfterMs) failuresInARow = 0;
      failuresInARow += 1;
      const delay = restartDelay(policy, failuresInARow);
      const when = listeningSince === undefined ? " before listening" : "";
      options.say(`${options.name} exited (${exitReason(code)})${when}; restarting in ${delay / 1000}s`);
      restartTimer = setTimeout(() => {
        restartTimer = undefined;
        if (stopping) return;
        current = spawnOnce();
        watch(current);
        current.listening.then(
          (line) =>
            options.say(`${options.name} restarted (pid ${typeof line.pid === "number" ? line.pid : current.pid})`),
          () => undefined,
        );
      }, delay);
    });
  };

  const started = current.listening.then((line) => {
    for (const [field, variable] of Object.entries(options.pinnedPorts)) {
      if (typeof line[field] === "number") env[variable] = String(line[field]);
    }
    return line;
  });
  started.catch(() => undefined); // awaited by the launcher; a stop before listening needs no handler
  watch(current);

  return {
    name: options.name,
    started,
    current: () => current,
    heal() {
      healing = true;
    },
    async stop() {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = current;
      const kill = setTimeout(() => void running.stop("SIGKILL"), options.killAfterMs ?? 40_000);
      await running.stop("SIGTERM");
      clearTimeout(kill);
    },
  };
}
