import { describe, expect, expectTypeOf, it } from "vitest";
import {
  asksForHelp,
  commandHelp,
  commandList,
  commandOf,
  commandsUsing,
  readOptions,
  runCommand,
  type AnyCommandRow,
} from "./command-table.js";
import { UsageError } from "./errors.js";

interface Shelf {
  put(item: unknown): void;
}
const command = commandsUsing<Shelf>();

const wholeNumberOf = (text: string) => {
  if (!/^[0-9]+$/.test(text)) throw new UsageError("--count must be a whole number");
  return Number(text);
};

const petAdd = command({
  name: "pet add",
  options: {
    name: { type: "string", required: true, value: "NAME" },
    kind: { type: "string", required: true, choices: ["cat", "dog"] },
    colour: { type: "string", choices: ["black", "white", "tabby"] },
    size: { type: "string", choices: ["small", "large"] },
    tags: { type: "string", list: true, value: "TAG" },
    count: { type: "string", required: true, value: "N", parse: wholeNumberOf },
    ownerId: { type: "string", value: "ID" },
    dryRun: { type: "boolean" },
  },
  does: "adds a pet",
  run(options, shelf) {
    shelf.put(options);
    return Promise.resolve({ added: options.name });
  },
});

const petCount = command({
  name: "pet count",
  options: {},
  does: "counts the pets",
  run: () => Promise.resolve({ pets: 0 }),
});

const petFeed = command({
  name: "pet feed",
  options: { id: { type: "string", required: true, value: "ID" }, food: { type: "string", value: "FOOD" } },
  does: "feeds a pet",
  needs: "--id ID (and a bowl)",
  run: () => Promise.resolve({}),
});

const table: AnyCommandRow<Shelf>[] = [petAdd, petCount, petFeed];

/** What `fn` threw, for its name, message and code. */
function thrownBy(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error("nothing was thrown");
}

describe("command table", () => {
  it("reads a row's options typed: choices as their union, lists as items, parsed values, booleans, kebab-case flags", () => {
    const options = readOptions(petAdd, [
      ...["--name", "Rex", "--kind", "dog", "--tags", " old, ,loud ", "--count", "3"],
      ...["--owner-id", "o_1", "--dry-run"],
    ]);
    expect(options).toEqual({
      name: "Rex",
      kind: "dog",
      colour: undefined,
      size: undefined,
      tags: ["old", "loud"],
      count: 3,
      ownerId: "o_1",
      dryRun: true,
    });
    expectTypeOf(options).toEqualTypeOf<{
      name: string;
      kind: "cat" | "dog";
      colour: "black" | "white" | "tabby" | undefined;
      size: "small" | "large" | undefined;
      tags: string[];
      count: number;
      ownerId: string | undefined;
      dryRun: boolean;
    }>();
  });

  it("gives absent optional options as undefined, an absent list as no items and an absent flag as false", () => {
    expect(readOptions(petAdd, ["--name", "Rex", "--kind", "cat", "--count", "0"])).toEqual({
      name: "Rex",
      kind: "cat",
      colour: undefined,
      size: undefined,
      tags: [],
      count: 0,
      ownerId: undefined,
      dryRun: false,
    });
    expect(readOptions(petAdd, ["--name", "Rex", "--kind", "cat", "--count", "0", "--owner-id="]).ownerId).toBe("");
  });

  it.each([
    [[], "pet add needs --name NAME --kind cat|dog --count N"],
    [["--kind", "cat", "--count", "1"], "pet add needs --name NAME --kind cat|dog --count N"],
    // An empty value is as good as none...
    [["--name", "", "--kind", "cat", "--count", "1"], "pet add needs --name NAME --kind cat|dog --count N"],
    // ...and a required choice outside its choices is missing too.
    [["--name", "Rex", "--kind", "cow", "--count", "1"], "pet add needs --name NAME --kind cat|dog --count N"],
    // A missing option is reported before any other option's value is judged.
    [["--kind", "cat", "--count", "x", "--colour", "red"], "pet add needs --name NAME --kind cat|dog --count N"],
    // An option with a parse judges its empty value itself.
    [["--name", "Rex", "--kind", "cat", "--count", ""], "--count must be a whole number"],
    [["--name", "Rex", "--kind", "cat", "--count", "x"], "--count must be a whole number"],
    [["--name", "Rex", "--kind", "cat", "--count", "1", "--size", "huge"], "--size must be small or large"],
    [["--name", "Rex", "--kind", "cat", "--count", "1", "--colour", ""], "--colour must be one of black, white, tabby"],
  ])("refuses %j with a UsageError: %s", (args, message) => {
    const error = thrownBy(() => readOptions(petAdd, args));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(message);
  });

  it("says what a row's own `needs` says when a required option is missing", () => {
    expect(thrownBy(() => readOptions(petFeed, ["--food", "fish"])).message).toBe(
      "pet feed needs --id ID (and a bowl)",
    );
    expect(readOptions(petFeed, ["--id", "p_1"])).toEqual({ id: "p_1", food: undefined });
  });

  it.each([
    [petAdd, ["--name", "Rex", "--colour"], "ERR_PARSE_ARGS_INVALID_OPTION_VALUE"],
    [petAdd, ["--nmae", "Rex"], "ERR_PARSE_ARGS_UNKNOWN_OPTION"],
    [petAdd, ["--name", "Rex", "--kind", "cat", "--count", "1", "extra"], "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL"],
    [petCount, ["--now"], "ERR_PARSE_ARGS_UNKNOWN_OPTION"],
    [petAdd, ["--ownerId", "o_1"], "ERR_PARSE_ARGS_UNKNOWN_OPTION"],
  ])("leaves unknown options and stray words to parseArgs (strict): %#", (row, args, code) => {
    expect(thrownBy(() => readOptions(row as AnyCommandRow<Shelf>, args)).code).toBe(code);
  });

  it("writes one command's help from its row", () => {
    expect(commandHelp("zoo", petAdd)).toBe(
      "usage: zoo pet add --name NAME --kind cat|dog [--colour black|white|tabby] [--size small|large] " +
        "[--tags TAG[,TAG...]] --count N [--owner-id ID] [--dry-run]\n  adds a pet\n",
    );
    expect(commandHelp("zoo", petFeed)).toBe("usage: zoo pet feed --id ID [--food FOOD]\n  feeds a pet\n");
  });

  it("lists the table's commands in its order, each with its usage and what it does", () => {
    expect(commandList(table)).toEqual([
      expect.stringMatching(/^ {2}pet add --name NAME .* \[--dry-run\]\n {6}adds a pet$/) as string,
      "  pet count \n      counts the pets",
      "  pet feed --id ID [--food FOOD]\n      feeds a pet",
    ]);
  });

  it("finds the command the first two words name, and sees a request for help anywhere", () => {
    expect(commandOf(table, ["pet", "feed", "--id", "p_1"])).toEqual({ row: petFeed, args: ["--id", "p_1"] });
    expect(commandOf(table, ["pet"])).toBeUndefined();
    expect(commandOf(table, ["pet", "adds"])).toBeUndefined();
    expect(commandOf(table, ["--help"])).toBeUndefined();
    for (const argv of [["--help"], ["-h"], ["help"], ["pet", "add", "--name", "-h"], ["help", "pet", "add"]]) {
      expect(asksForHelp(argv), argv.join(" ")).toBe(true);
    }
    for (const argv of [[], ["pet", "add", "help"], ["pet", "add", "--name", "helpful"]]) {
      expect(asksForHelp(argv), argv.join(" ")).toBe(false);
    }
  });

  it("runs a row's call with its options read and the resources given; a refusal comes before the call", async () => {
    const put: unknown[] = [];
    const shelf: Shelf = { put: (item) => void put.push(item) };
    await expect(runCommand(petAdd, ["--name", "Rex", "--kind", "dog", "--count", "2"], shelf)).resolves.toEqual({
      added: "Rex",
    });
    expect(put).toEqual([expect.objectContaining({ name: "Rex", kind: "dog", count: 2 })]);
    await expect(runCommand(petAdd, ["--name", "Tom"], shelf)).rejects.toThrow(UsageError);
    expect(put).toHaveLength(1);
  });
});
