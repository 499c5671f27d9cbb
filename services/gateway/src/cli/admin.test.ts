import { describe, expect, it } from "vitest";
import { runAdmin } from "./admin.js";

/** Nothing answers here: help and refusals of the command line must not need the stack. */
const nowhere = {
  PATH: process.env.PATH ?? "",
  DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
  NOTIFY_ADDR: "127.0.0.1:1",
  WEBHOOKS_ADDR: "127.0.0.1:1",
};

async function admin(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runAdmin(argv, nowhere, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  return { code, stdout, stderr };
}

/** Each command's usage line, as the README and docs/operations.md describe the commands. */
const usages: [string, string][] = [
  ["key create", "[--tenants ID[,ID...]] [--scopes S[,S...]] [--name N]"],
  ["key revoke", "--id KEYID"],
  ["tenant create", "--name NAME [--id ID] [--plan testing|commercial]"],
  ["tenant get", "--id ID"],
  [
    "tenant plan",
    "--id ID --plan commercial|testing --reason agreement_signed|card_saved|agreement_ended|card_removed|operator_correction [--expected-version N]",
  ],
  ["tenant activate", "--id ID"],
  [
    "tenant channel connect",
    "--id ID --waba WABA_ID --phone-number-id PHONE_NUMBER_ID --token ACCESS_TOKEN [--template TYPE=NAME:LANG[,TYPE=NAME:LANG...]] [--messages-per-second N] [--stop-keywords WORD[,WORD...]] [--start-keywords WORD[,WORD...]] [--expected-version N]",
  ],
  ["tenant channel", "--id ID --state ready|not_ready"],
  ["capability report", "--tenant ID --capability NAME --result pass|fail [--reason CODE]"],
  ["tenant opt-out", "--id ID --to PHONE"],
  ["tenant opt-in", "--id ID --to PHONE"],
  ["event emit", "--tenant ID --type TYPE --data JSON [--id EVENT_ID]"],
  ["usage record", "--tenant ID --tokens N [--record-id ID]"],
  ["user create", "--tenant ID --email E --role owner|admin|viewer"],
  ["user invite", "--id USER_ID"],
  ["user disable", "--id USER_ID"],
  ["user list", "--tenant ID"],
  ["projection rebuild", ""],
];

describe("admin CLI without a stack", () => {
  it("lists every command in the help, in order, each with its usage and what it does", async () => {
    const { code, stdout, stderr } = await admin("--help");
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    // A name is two words, or three (`tenant channel connect`): the words before the first option.
    const listed = [...stdout.matchAll(/^ {2}((?:[a-z-]+ ){1,2}[a-z-]+)(?: ([[-].*?))? ?\n {6}\S/gm)].map((m) => [
      m[1],
      m[2] ?? "",
    ]);
    expect(listed).toEqual(usages);
    expect(stdout).toMatch(/^usage: admin <command> \[options\] {3}\(npm run -s admin -- <command> \[options\]\)\n/);
    expect(stdout).toMatch(/\n`admin <command> --help` describes one command\.\n$/);
  });

  it.each(usages)("prints the usage of %s alone for --help, -h or help first", async (name, usage) => {
    for (const argv of [
      [...name.split(" "), "--help"],
      [...name.split(" "), "-h"],
      ["help", ...name.split(" ")],
    ]) {
      const { code, stdout, stderr } = await admin(...argv);
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      if (argv[0] === "help") expect(stdout).toMatch(/^usage: admin <command>/);
      else expect(stdout.split("\n")).toEqual([`usage: admin ${name} ${usage}`, expect.stringMatching(/^ {2}\S/), ""]);
    }
  });

  it.each([
    [["key", "revoke"], "key revoke needs --id KEYID"],
    [["key", "revoke", "--id", ""], "key revoke needs --id KEYID"],
    [
      ["key", "create", "--scopes", "pets:everything,tenant:read,x"],
      "unknown scope pets:everything, x; known scopes: ",
    ],
    [["tenant", "create", "--plan", "x"], "tenant create needs --name NAME"],
    [["tenant", "create", "--name", "a", "--plan", ""], "--plan must be testing or commercial"],
    [["tenant", "get"], "tenant get needs --id ID"],
    [
      ["tenant", "plan", "--id", "a", "--plan", "x", "--reason", "r"],
      "tenant plan needs --id ID --plan commercial|testing --reason REASON",
    ],
    [
      ["tenant", "plan", "--id", "a", "--plan", "testing", "--reason", "r", "--expected-version", "0"],
      "--expected-version must be a positive integer",
    ],
    [["tenant", "activate"], "tenant activate needs --id ID"],
    [["tenant", "channel", "--id", "a", "--state", "x"], "tenant channel needs --id ID --state ready|not_ready"],
    [
      ["tenant", "channel", "connect", "--id", "a", "--waba", "1"],
      "tenant channel connect needs --id ID --waba WABA_ID --phone-number-id PHONE_NUMBER_ID --token ACCESS_TOKEN",
    ],
    [
      [
        "tenant",
        "channel",
        "connect",
        "--id",
        "a",
        "--waba",
        "1",
        "--phone-number-id",
        "2",
        "--token",
        "t",
        "--template",
        "reminder",
      ],
      '--template "reminder" must be TYPE=NAME:LANG (reminder=appointment_reminder:en_US)',
    ],
    [
      ["capability", "report", "--tenant", "a", "--capability", "c", "--result", "maybe"],
      "capability report needs --tenant ID --capability NAME --result pass|fail [--reason CODE]",
    ],
    [["tenant", "opt-out", "--id", "a"], "tenant opt-out needs --id ID --to PHONE"],
    [["tenant", "opt-in", "--to", "+1"], "tenant opt-in needs --id ID --to PHONE"],
    [["event", "emit", "--tenant", "a", "--type", "t"], "event emit needs --tenant ID --type TYPE --data JSON"],
    [["event", "emit", "--tenant", "a", "--type", "t", "--data", ""], "--data is not valid JSON: "],
    [["event", "emit", "--tenant", "a", "--type", "t", "--data", "null"], "--data must be a JSON object "],
    [["usage", "record", "--tokens", "x"], "usage record needs --tenant ID --tokens N"],
    [
      ["usage", "record", "--tenant", "a", "--tokens", ""],
      "--tokens must be a whole number from 1 to 9007199254740991",
    ],
    [
      ["user", "create", "--tenant", "a", "--email", "e"],
      "user create needs --tenant ID --email E --role owner|admin|viewer",
    ],
    [["user", "create", "--tenant", "a", "--email", "e", "--role", "x"], "--role must be one of viewer, admin, owner"],
    [["user", "create", "--tenant", "a", "--email", "bad", "--role", "admin"], "--email bad is not an email address"],
    [["user", "invite", "--id", ""], "user invite needs --id USER_ID"],
    [["user", "disable"], "user disable needs --id USER_ID"],
    [["user", "list"], "user list needs --tenant ID"],
    [["projection", "rebuild", "--now"], "Unknown option '--now'"],
    [["tenant", "delete"], "usage: admin <key create | key revoke | tenant create | tenant get | tenant plan | "],
  ])("refuses %j with exit 2 before reaching anything", async (argv, message) => {
    const { code, stdout, stderr } = await admin(...argv);
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect((JSON.parse(stderr) as { error: string }).error.startsWith(message), stderr).toBe(true);
  });
});
