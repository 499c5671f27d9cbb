import { describe, expect, it } from "vitest";
import type { ConsoleUser } from "../../db/console-store.js";
import { actorText } from "./tenant.js";

const user: ConsoleUser = {
  userId: "usr_0123456789abcdef01234567",
  tenantId: "ten_a",
  email: "ana@example.com",
  role: "admin",
  createdAt: new Date(0),
  disabledAt: null,
  hasPassword: true,
};

describe("actorText: who did it, in the activity feed", () => {
  it("shows a console user by their email", () => {
    expect(actorText("console:usr_0123456789abcdef01234567", [user])).toBe("ana@example.com");
    expect(actorText("console:ana@example.com", [])).toBe("ana@example.com");
  });
  it("shows an unknown console user by what the event named, an API key by its id, others as they are", () => {
    expect(actorText("console:usr_ffffffffffffffffffffffff", [user])).toBe("usr_ffffffffffffffffffffffff");
    expect(actorText("api_key:key_1", [user])).toBe("API key key_1");
    expect(actorText("platform", [user])).toBe("platform");
    expect(actorText("", [user])).toBe("—");
  });
});
