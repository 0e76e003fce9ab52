import { Help } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "./catalog.js";

describe("the command catalog", () => {
  it("says of each command what the command itself says (name, description, usage)", async () => {
    const help = new Help();
    for (const entry of COMMANDS) {
      const command = await entry.load();
      expect(command.name()).toBe(entry.name);
      expect(command.description()).toBe(entry.summary);
      expect(help.subcommandTerm(command)).toBe(entry.term);
    }
  }, 60_000);
});
