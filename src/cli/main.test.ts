// A reader that stops early (`onto ... | head -1`) must not crash the CLI: Node raises EPIPE as an
// unhandled 'error' event (exit 1 with a stack trace) unless src/cli/main.ts handles it.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("onto writing into a closed pipe", () => {
  it("ends quietly with exit 0", () => {
    // `onto render` writes ~4000 lines; head takes one and closes the pipe. pipefail: node's code.
    const run = spawnSync(
      "bash",
      ["-c", "set -o pipefail; node bin/onto.js render -f samples/production.yaml -o json | head -1"],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(run.stdout).toBe("{\n");
    expect(run.stderr).not.toMatch(/EPIPE|Error/);
    expect(run.status).toBe(0);
  });
});
