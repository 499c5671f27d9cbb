/**
 * Who did a console or API action, as the caller names them (the console passes
 * "console:<user email>"): it travels with the action's internal fact to the tenant's activity
 * feed. notify keeps only identifier-like tokens there, so the same rule is checked here, where a
 * caller can be told: 1-128 of A-Z a-z 0-9 _ . : + - @ /.
 */
import { InvalidArgumentError } from "@platform/service-kit/errors";

const ACTOR = /^[A-Za-z0-9_.:+\-@/]{1,128}$/;

/** The optional actor, trimmed; empty counts as not given. */
export function actorOf(actor: string | undefined): string | null {
  const trimmed = actor?.trim() ?? "";
  if (trimmed === "") return null;
  if (!ACTOR.test(trimmed)) {
    throw new InvalidArgumentError(
      "request.invalid",
      "actor must be 1-128 of A-Z a-z 0-9 _ . : + - @ / (e.g. console:user@example.com)",
    );
  }
  return trimmed;
}
