/**
 * The admin CLI as a table: a command is one row (its two-word name, its options, what it does,
 * the call), and this module reads a command line against the rows and writes the help from them.
 *
 * A row's options are read with node:util parseArgs (strict: an unknown option or a stray word is
 * refused with node's message); then what the row declares is checked in one order: a required
 * option missing (or outside its choices) refuses the command with its `needs` line, an optional
 * one outside its choices says which values it takes, a `parse` says what is wrong with its value.
 * The call receives the options typed: camelCase keys (`expectedVersion` is `--expected-version`),
 * a choice as its union, a list as string[], a parsed value as its parse answers.
 */
import { parseArgs } from "node:util";
import { UsageError } from "./errors.js";

interface OneValue {
  readonly type: "string";
  /**
   * Missing when absent or empty (or, with a `parse`, only when absent: the parse judges an empty
   * value). A required option outside its choices counts as missing.
   */
  readonly required?: boolean;
  readonly list?: false;
  /** Checks the value, throwing a UsageError that says why, and answers what the call receives. */
  readonly parse?: (text: string) => unknown;
}

/** `--id ID`: one string, shown in usage by the name of its value. */
interface StringOption extends OneValue {
  readonly value: string;
  readonly choices?: undefined;
}

/** `--plan testing|commercial`: one of a few values, shown in usage as they are. */
interface ChoiceOption extends OneValue {
  readonly choices: readonly string[];
  readonly value?: undefined;
}

/** `--tenants ID[,ID...]`: a comma-separated list; the call receives its trimmed, non-empty items. */
interface ListOption {
  readonly type: "string";
  readonly list: true;
  readonly value: string;
  readonly choices?: undefined;
  /** Missing when it has no items. */
  readonly required?: boolean;
}

/** `--dry-run`: given or not. */
interface BooleanOption {
  readonly type: "boolean";
}

export type OptionDeclaration = StringOption | ChoiceOption | ListOption | BooleanOption;
export type OptionDeclarations = Readonly<Record<string, OptionDeclaration>>;

/** What the call receives for an option declared as D. */
type ValueOf<D> = D extends { type: "boolean" }
  ? boolean
  : D extends { list: true }
    ? string[]
    : | (D extends { parse: (text: string) => infer T } ? T : D extends { choices: readonly (infer C)[] } ? C : string)
      | (D extends { required: true } ? never : undefined);

export type OptionValues<O extends OptionDeclarations> = { -readonly [K in keyof O]: ValueOf<O[K]> };

/** One command of the table, calling with resources R. */
export interface CommandRow<O extends OptionDeclarations, R> {
  /** Two words, the area and the verb: `key create`. */
  readonly name: string;
  readonly options: O;
  /** What it does, for --help. */
  readonly does: string;
  /**
   * What the refusal of a missing required option says after "<name> needs", when the required
   * options' usage would say too little or too much.
   */
  readonly needs?: string;
  /** The command itself, given its options read and checked. */
  run(options: OptionValues<O>, resources: R): Promise<unknown>;
}

/** A row of any options: what a table holds. */
export type AnyCommandRow<R> = CommandRow<OptionDeclarations, R>;

/** Rows whose calls take resources R, each typed by its own options: `const command = commandsUsing<R>()`. */
export function commandsUsing<R>() {
  return <const O extends OptionDeclarations>(row: CommandRow<O, R>): CommandRow<O, R> => row;
}

/** `expectedVersion` -> `expected-version`. */
const flagOf = (key: string) => key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

const listItems = (text: string | undefined) =>
  (text ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);

/** "a or b", "one of a, b, c". */
const oneOf = (choices: readonly string[]) =>
  choices.length === 2 ? `${choices[0]} or ${choices[1]}` : `one of ${choices.join(", ")}`;

function isMissing(option: OptionDeclaration, given: string | boolean | undefined): boolean {
  if (option.type === "boolean" || !option.required) return false;
  if (typeof given !== "string") return true;
  if (option.list) return listItems(given).length === 0;
  if (option.choices) return !option.choices.includes(given);
  return given === "" && !option.parse;
}

/**
 * The options of `args` (the words after the command's name) as the row declares them; a
 * UsageError (or parseArgs' own ERR_PARSE_ARGS_* error) when they cannot be.
 */
export function readOptions<O extends OptionDeclarations, R>(row: CommandRow<O, R>, args: string[]): OptionValues<O> {
  const declared = Object.entries(row.options);
  const { values } = parseArgs({
    args,
    options: Object.fromEntries(declared.map(([key, option]) => [flagOf(key), { type: option.type }])),
    strict: true,
  });
  const given = (key: string) => values[flagOf(key)];
  if (declared.some(([key, option]) => isMissing(option, given(key)))) {
    throw new UsageError(`${row.name} needs ${row.needs ?? requiredUsage(row.options)}`);
  }
  const read: Record<string, unknown> = {};
  for (const [key, option] of declared) {
    const value = given(key);
    if (option.type === "boolean") read[key] = value === true;
    else if (option.list) read[key] = listItems(value as string | undefined);
    else if (typeof value !== "string") read[key] = undefined;
    else if (option.choices && !option.choices.includes(value)) {
      throw new UsageError(`--${flagOf(key)} must be ${oneOf(option.choices)}`);
    } else read[key] = option.parse ? option.parse(value) : value;
  }
  return read as OptionValues<O>;
}

/** `--id ID`, `[--plan testing|commercial]`, `[--tenants ID[,ID...]]`, `[--dry-run]`. */
function optionUsage(key: string, option: OptionDeclaration): string {
  const flag = `--${flagOf(key)}`;
  if (option.type === "boolean") return `[${flag}]`;
  const value = option.choices?.join("|") ?? option.value!;
  const usage = `${flag} ${option.list ? `${value}[,${value}...]` : value}`;
  return option.required ? usage : `[${usage}]`;
}

const requiredUsage = (options: OptionDeclarations) =>
  Object.entries(options)
    .filter(([, option]) => option.type === "string" && option.required)
    .map(([key, option]) => optionUsage(key, option))
    .join(" ");

/** A row's options as usage shows them, after its name. */
export const optionsUsage = (row: AnyCommandRow<unknown>) =>
  Object.entries(row.options)
    .map(([key, option]) => optionUsage(key, option))
    .join(" ");

/**
 * The row of the command `argv` names (its first two words, or three for a row whose name has
 * three: `tenant channel connect` beside `tenant channel`; the longest name wins), and the words
 * after them.
 */
export function commandOf<R>(
  rows: readonly AnyCommandRow<R>[],
  argv: string[],
): { row: AnyCommandRow<R>; args: string[] } | undefined {
  for (const words of [3, 2]) {
    const name = argv.slice(0, words).join(" ");
    const row = rows.find((candidate) => candidate.name === name && candidate.name.split(" ").length === words);
    if (row) return { row, args: argv.slice(words) };
  }
  return undefined;
}

/** `--help` or `-h` anywhere, or `help` first. */
export const asksForHelp = (argv: string[]) => argv.includes("--help") || argv.includes("-h") || argv[0] === "help";

/** One command's help: its usage line and what it does. */
export const commandHelp = (program: string, row: AnyCommandRow<unknown>) =>
  `usage: ${program} ${row.name} ${optionsUsage(row)}\n  ${row.does}\n`;

/** The table's commands for the top-level help: each usage line, then what it does, indented. */
export const commandList = (rows: readonly AnyCommandRow<unknown>[]) =>
  rows.map((row) => `  ${row.name} ${optionsUsage(row)}\n      ${row.does}`);

/** Runs the row's call with the options read from `args` (a refusal rejects before the call). */
export async function runCommand<R>(row: AnyCommandRow<R>, args: string[], resources: R): Promise<unknown> {
  return row.run(readOptions(row, args), resources);
}
