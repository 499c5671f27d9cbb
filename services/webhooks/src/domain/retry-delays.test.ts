import { describe, expect, it } from "vitest";
import { defaultRetryDelays, InvalidRetryDelaysError, parseRetryDelays } from "./retry-delays.js";

const minute = 60_000;
const delaysMs = parseRetryDelays(defaultRetryDelays);

describe("parseRetryDelays", () => {
  it("reads the default as 10, 20, 40, 80, 160, 320 and 640 minutes", () => {
    expect(delaysMs).toEqual([10, 20, 40, 80, 160, 320, 640].map((m) => m * minute));
  });

  it.each([
    ["1s,2s,3s,4s,5s,6s,7s", [1000, 2000, 3000, 4000, 5000, 6000, 7000]],
    [" 500ms , 1s,1m,1h,1d,2d,3d ", [500, 1000, 60_000, 3_600_000, 86_400_000, 172_800_000, 259_200_000]],
  ])("reads %j", (text, expected) => {
    expect(parseRetryDelays(text)).toEqual(expected);
  });

  it.each([
    ["six entries", "1s,2s,3s,4s,5s,6s", [/exactly 7 delays.*got 6/]],
    ["eight entries", "1s,1s,1s,1s,1s,1s,1s,1s", [/exactly 7 delays.*got 8/]],
    ["an empty string", "", [/got 1/, /entry 1 "" is not a duration/]],
    ["a zero", "0m,1s,1s,1s,1s,1s,1s", [/entry 1 "0m" must be positive/]],
    ["a negative", "1s,-5m,1s,1s,1s,1s,1s", [/entry 2 "-5m" is not a duration/]],
    ["a fraction", "1s,1s,1.5m,1s,1s,1s,1s", [/entry 3 "1.5m" is not a duration/]],
    ["no unit", "1s,1s,1s,10,1s,1s,1s", [/entry 4 "10" is not a duration/]],
    ["two bad entries", "1x,1s,1s,1s,1s,1s,0s", [/entry 1 "1x"/, /entry 7 "0s" must be positive/]],
  ])("refuses %s, naming every problem", (_label, text, expected) => {
    try {
      parseRetryDelays(text);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidRetryDelaysError);
      const problems = (error as InvalidRetryDelaysError).problems;
      expect(problems).toHaveLength(expected.length);
      expected.forEach((pattern, index) => expect(problems[index]).toMatch(pattern));
      expect((error as InvalidRetryDelaysError).message).toMatch(/^WEBHOOKS_RETRY_DELAYS: /);
    }
  });
});
