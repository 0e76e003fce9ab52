// Prints one plain closing line, `tests: N passed, N failed, N skipped`, after vitest's own
// report, so CI tools that read a closing count line (and people skimming a log) find it; before
// it, the slowest files with their project and duration, so a run's time budget can be read from
// its log; and one `failed: <project> <file> > <test>` line per failed test, followed by the first
// lines of its error (each `  | `), which `npm test`'s runner (scripts/test-all.ts) gathers from all
// its runs: the closing lines of a long CI log then say why, not only what, failed.
import type { Reporter, TestModule } from "vitest/node";

const SLOWEST = 15;
/** How a failure's line starts, and each line of its error after it (scripts/test-all.ts reads both). */
export const FAILED_PREFIX = "failed: ";
export const ERROR_PREFIX = "  | ";
/** Lines of a failed test's first error kept in the summary, and characters per line. */
const ERROR_LINES = 12;
const ERROR_LINE_CHARS = 300;

/** A failure's first error, as summary lines. */
export function errorLines(message: string | undefined): string[] {
  if (!message) return [];
  return message
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(0, ERROR_LINES)
    .map((l) => `${ERROR_PREFIX}${l.length > ERROR_LINE_CHARS ? `${l.slice(0, ERROR_LINE_CHARS)}…` : l}`);
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const failures: string[] = [];
    for (const module of testModules) {
      // A file that failed to load (syntax error, setup crash) has no tests; count it as a failure.
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) {
        failed++;
        failures.push(
          `${FAILED_PREFIX}${module.project.name} ${module.relativeModuleId} (did not load or its setup failed)`,
        );
      }
      let testsFailed = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") {
          failed++;
          testsFailed++;
          failures.push(
            `${FAILED_PREFIX}${module.project.name} ${module.relativeModuleId} > ${test.fullName}`,
            ...errorLines(test.result().errors?.[0]?.message),
          );
        } else skipped++;
      }
      // Its tests passed but the file failed: a beforeAll or afterAll hook threw. Counted as one
      // failure, or the closing count would call a failed run clean.
      const hookErrors = module.errors();
      if (module.state() === "failed" && testsFailed === 0 && [...module.children.allTests()].length > 0) {
        failed++;
        failures.push(
          `${FAILED_PREFIX}${module.project.name} ${module.relativeModuleId} (a beforeAll or afterAll hook)`,
          ...errorLines(hookErrors[0]?.message),
        );
      }
    }
    const slowest = [...testModules]
      .map((m) => ({
        name: `${m.project.name} ${m.relativeModuleId}`,
        seconds: m.diagnostic().duration / 1000,
      }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SLOWEST);
    if (slowest.length > 0)
      console.log(
        `\nslowest files:\n${slowest.map((f) => `  ${f.seconds.toFixed(1).padStart(7)} s  ${f.name}`).join("\n")}`,
      );
    if (failures.length > 0) console.log(`\n${failures.join("\n")}`);
    console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
