import type { ServingStatus } from "./grpc-health.js";

/** One check of a downstream: its `grpc.health.v1` status, "UNREACHABLE" when it did not answer within `timeoutMs`. */
export type DownstreamCheck = (timeoutMs: number) => Promise<ServingStatus>;

export interface DownstreamViewOptions {
  /** Time between checks while the downstream answers; also each check's deadline. */
  intervalMs: number;
  /** Consecutive unanswered checks, with no answer in between, before the downstream counts as unreachable (default 2). */
  failureThreshold?: number;
  /**
   * After an unanswered check, the next starts as soon as it ended but never sooner than this
   * after its start (default 250 ms): a channel that refuses at once is not probed in a busy loop.
   */
  probeSpacingMs?: number;
  /** Told of every change of `status` (to log it). */
  onChange?: (status: ServingStatus, previous: ServingStatus) => void;
}

export const DEFAULT_FAILURE_THRESHOLD = 2;
export const DEFAULT_PROBE_SPACING_MS = 250;

/**
 * What a caller knows of one downstream, kept current in the background so that nobody waits
 * for it: the gateway's /readyz reads it, and its clients refuse calls at once while it says the
 * downstream is unreachable (fail-fast-client.ts).
 *
 * One check runs at a time, forever: every `intervalMs` while the downstream answers; right
 * after an unanswered one (spaced by `probeSpacingMs`) otherwise. `failureThreshold` unanswered
 * checks in a row make the status UNREACHABLE; the first answered check makes it what the
 * downstream answered. While unreachable the one check in flight is the half-open probe: it is
 * sent to the downstream as a call would be, and a process that was frozen answers it as soon as
 * it runs again, so the view turns reachable within the round trip, not after a fixed wait.
 *
 * Against several processes (a list of addresses, a dns:/// name) checks are balanced round
 * robin like the calls, so one hung process among answering ones never makes `failureThreshold`
 * (2) failures in a row: only a downstream where no process answers counts as unreachable.
 * Only UNREACHABLE refuses calls: a NOT_SERVING process is draining and still answers them.
 */
export class DownstreamView {
  #status: ServingStatus = "UNKNOWN";
  #failures = 0;
  #started = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  #firstCheck: Promise<void>;
  #firstCheckDone: () => void = () => undefined;
  readonly #failureThreshold: number;
  readonly #probeSpacingMs: number;

  constructor(
    readonly name: string,
    private readonly check: DownstreamCheck,
    private readonly options: DownstreamViewOptions,
  ) {
    this.#failureThreshold = options.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
    this.#probeSpacingMs = options.probeSpacingMs ?? DEFAULT_PROBE_SPACING_MS;
    this.#firstCheck = new Promise((resolve) => (this.#firstCheckDone = resolve));
  }

  /** The last status the downstream answered; UNREACHABLE once `failureThreshold` checks in a row went unanswered; UNKNOWN before the first answer. */
  get status(): ServingStatus {
    return this.#status;
  }

  /** False only while the status is UNREACHABLE: calls are then refused before anything is sent. */
  get reachable(): boolean {
    return this.#status !== "UNREACHABLE";
  }

  /** Starts checking; resolves after the first check ended, or after `waitMs` (default: no wait), whichever is first. */
  async start(waitMs = 0): Promise<void> {
    if (!this.#started) void this.#run();
    this.#started = true;
    if (waitMs <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#firstCheck, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  /** Stops checking (a check in flight is left to end on its deadline; its result is ignored). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#wake?.();
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const started = performance.now();
      let answer: ServingStatus;
      try {
        answer = await this.check(this.options.intervalMs);
      } catch {
        answer = "UNREACHABLE";
      }
      if (this.#stopped) return;
      this.#record(answer);
      this.#firstCheckDone();
      const waitMs =
        this.#failures === 0
          ? this.options.intervalMs
          : Math.max(0, this.#probeSpacingMs - (performance.now() - started));
      if (waitMs > 0) await this.#sleep(waitMs);
    }
  }

  #record(answer: ServingStatus): void {
    const previous = this.#status;
    if (answer === "UNREACHABLE") {
      this.#failures += 1;
      if (this.#failures >= this.#failureThreshold) this.#status = "UNREACHABLE";
    } else {
      this.#failures = 0;
      this.#status = answer;
    }
    if (this.#status !== previous) this.options.onChange?.(this.#status, previous);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(resolve, ms);
      this.#timer.unref();
    });
  }
}
