import { describe, expect, it } from "vitest";
import { DEFAULT_TOLERANCE } from "./compare.js";
import { SCENARIOS, parseBenchOptions } from "./options.js";

describe("parseBenchOptions", () => {
  it("runs every scenario, the full scale sizes, and enough nodes by default", () => {
    const o = parseBenchOptions([], "/state");
    expect(o).toMatchObject({
      quick: false,
      json: false,
      tolerance: DEFAULT_TOLERANCE,
      scenarios: [...SCENARIOS],
      platforms: [100, 250, 500],
      stateDir: "/state",
      workers: 100,
    });
  });

  it("--quick runs a small scale step", () => {
    expect(parseBenchOptions(["--quick", "--json"], "/s")).toMatchObject({
      quick: true,
      json: true,
      platforms: [10],
      workers: 6,
    });
  });

  it("takes scenario and platform lists, a comparison and its tolerance", () => {
    const o = parseBenchOptions(
      [
        "--scenarios",
        "converge,scale",
        "--platforms",
        "50,100",
        "--compare",
        "old.json",
        "--tolerance",
        "0.5",
      ],
      "/s",
    );
    expect(o).toMatchObject({
      scenarios: ["converge", "scale"],
      platforms: [50, 100],
      compare: "old.json",
      tolerance: 0.5,
      workers: 20,
    });
  });

  it("names what is wrong in bad input", () => {
    expect(() => parseBenchOptions(["--scenarios", "converge,nope"], "/s")).toThrow(/unknown scenario nope/);
    expect(() => parseBenchOptions(["--platforms", "10,x"], "/s")).toThrow(/positive integers/);
    expect(() => parseBenchOptions(["--tolerance", "-1"], "/s")).toThrow(/relative tolerance/);
  });
});
