/**
 * The README's ```sh blocks, as readme.test.ts runs them. Each is preceded by an HTML comment
 * saying what the test does with it:
 *
 *   <!-- readme-test: run -->         run with bash in "the other terminal", in order, sharing the
 *                                     variables earlier blocks set; must exit 0
 *   <!-- readme-test: stack -->       the `npm start` terminal: run in the background until it prints
 *                                     `Gateway ready at`; stopped (Ctrl-C: SIGINT to its process
 *                                     group) before the next stack block and at the end
 *   <!-- readme-test: stack, without "TEXT" (REASON) -->   the same, with TEXT cut from the block
 *   <!-- readme-test: skip: REASON -->   not run, for the reason given
 *
 * A `# {...}` (or `# HTTP/...`) comment in a block documents a line the block prints: its shape
 * must match, with `...` standing for anything and any number for any number.
 */

export type ReadmeBlock =
  | { kind: "run"; line: number; code: string; outputs: string[] }
  | { kind: "stack"; line: number; code: string; outputs: string[]; without?: { text: string; reason: string } }
  | { kind: "skip"; line: number; code: string; reason: string };

/** Thrown for a ```sh block without a (valid) marker: every block is run or explicitly skipped. */
export class UnmarkedBlockError extends Error {
  override name = "UnmarkedBlockError";
}

const markerPattern = /^<!-- readme-test: (.*) -->$/;

function parseMarker(text: string, line: number, code: string): ReadmeBlock {
  if (text === "run") return { kind: "run", line, code, outputs: documentedOutputs(code) };
  if (text === "stack") return { kind: "stack", line, code, outputs: documentedOutputs(code) };
  const without = /^stack, without "([^"]+)" \((.+)\)$/.exec(text);
  if (without) {
    return {
      kind: "stack",
      line,
      code,
      outputs: documentedOutputs(code),
      without: { text: without[1]!, reason: without[2]! },
    };
  }
  const skip = /^skip: (.+)$/.exec(text);
  if (skip) return { kind: "skip", line, code, reason: skip[1]! };
  throw new UnmarkedBlockError(`README.md line ${line}: unknown readme-test marker ${JSON.stringify(text)}`);
}

/** Every ```sh block of the markdown with what its marker says, in order. */
export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split("\n");
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\S*)\s*$/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === "```");
    if (end < 0) throw new UnmarkedBlockError(`README.md line ${i + 1}: a code block that never ends`);
    if (fence[2] === "sh") {
      const code = lines.slice(i + 1, end).join("\n");
      let previous = i - 1;
      while (previous >= 0 && lines[previous]!.trim() === "") previous--;
      const marker = markerPattern.exec(lines[previous]?.trim() ?? "");
      if (!marker) {
        throw new UnmarkedBlockError(
          `README.md line ${i + 1}: a sh block without a <!-- readme-test: run | stack | skip: reason --> marker`,
        );
      }
      blocks.push(parseMarker(marker[1]!, i + 1, code));
    }
    i = end;
  }
  return blocks;
}

/** The lines a block documents it prints: `# {...}` or `# HTTP/1.1 200 OK` comments (prose around them dropped). */
export function documentedOutputs(code: string): string[] {
  const outputs: string[] = [];
  for (const line of code.split("\n")) {
    const comment = /(?:^|\s)#\s(.*)$/.exec(line)?.[1];
    if (comment === undefined) continue;
    const http = comment.indexOf("HTTP/");
    const brace = comment.indexOf("{");
    if (http >= 0 && (brace < 0 || http < brace))
      outputs.push(/^HTTP\/[\d.]+ \d{3}( [A-Za-z]+)*/.exec(comment.slice(http))![0]);
    else if (brace >= 0) outputs.push(comment.slice(brace, comment.lastIndexOf("}") + 1));
  }
  return outputs;
}

/** A documented output as a pattern of whole lines: `...` is anything, a number any number. */
export function outputShape(documented: string): RegExp {
  const parts = documented
    .split("...")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\d+/g, "\\d+"));
  return new RegExp(`^${parts.join(".*")}$`);
}

/** The variables a block assigns (`NAME=...` at the start of a line or after a space or `;`). */
export function assignedVariables(code: string): string[] {
  return [...new Set([...code.matchAll(/(?:^|[\s;])([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!))];
}

/** The documented outputs no line matches (each line may match one). */
export function unmatchedOutputs(outputs: string[], printed: string[]): string[] {
  const lines = printed.map((line) => line.replace(/\r$/, "").trim());
  const used = new Set<number>();
  return outputs.filter((documented) => {
    const shape = outputShape(documented);
    const index = lines.findIndex((line, i) => !used.has(i) && shape.test(line));
    if (index < 0) return true;
    used.add(index);
    return false;
  });
}
