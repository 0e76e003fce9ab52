// bin/onto.js runs a build only when it is fresh, the bundle (dist-bundle/) before dist/: a
// package with a build and no src/ runs it, a checkout runs src/ through tsx when both builds are
// missing or older than any source file (edited, added or removed). Each case is a small package laid out in a temporary directory with
// bin/onto.js and bin/entry.js copied in, and both entry points saying which one ran.
import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A package at a new temporary root with the given parts; file times in seconds since epoch. */
function layout(parts: { dist?: number; bundle?: number; src?: Record<string, number> }): string {
  const root = mkdtempSync(join(tmpdir(), "onto-entry-"));
  dirs.push(root);
  mkdirSync(join(root, "bin"));
  for (const name of ["onto.js", "entry.js"]) copyFileSync(join(ROOT, "bin", name), join(root, "bin", name));
  writeFileSync(join(root, "package.json"), '{ "type": "module" }\n');
  // tsx, for the source entry point, resolves from the package's node_modules.
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  if (parts.dist !== undefined) {
    mkdirSync(join(root, "dist", "cli"), { recursive: true });
    const main = join(root, "dist", "cli", "main.js");
    writeFileSync(main, 'console.log("compiled");\n');
    utimesSync(main, parts.dist, parts.dist);
  }
  if (parts.bundle !== undefined) {
    mkdirSync(join(root, "dist-bundle", "cli"), { recursive: true });
    const main = join(root, "dist-bundle", "cli", "main.js");
    writeFileSync(main, 'console.log("bundled");\n');
    utimesSync(main, parts.bundle, parts.bundle);
  }
  if (parts.src !== undefined) {
    mkdirSync(join(root, "src", "cli"), { recursive: true });
    writeFileSync(join(root, "src", "cli", "main.ts"), 'const ran: string = "source";\nconsole.log(ran);\n');
    for (const [path, time] of Object.entries(parts.src)) {
      const file = join(root, "src", path);
      mkdirSync(join(file, ".."), { recursive: true });
      writeFileSync(
        file,
        path.endsWith("main.ts") ? 'const ran: string = "source";\nconsole.log(ran);\n' : "\n",
      );
      utimesSync(file, time, time);
    }
    // Directories get the oldest time given, so only the files decide.
    const oldest = Math.min(...Object.values(parts.src));
    const dirsOf = (dir: string): string[] => [
      dir,
      ...readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .flatMap((e) => dirsOf(join(dir, e.name))),
    ];
    for (const dir of dirsOf(join(root, "src"))) utimesSync(dir, oldest, oldest);
  }
  return root;
}

function run(root: string): { ran: string; why: string } {
  const out = spawnSync(process.execPath, [join(root, "bin", "onto.js")], {
    encoding: "utf8",
    env: { ...process.env, ONTO_DEBUG_ENTRY: "1" },
  });
  expect(out.status, out.stderr).toBe(0);
  return { ran: out.stdout.trim(), why: out.stderr.trim() };
}

const T = 1_700_000_000;

describe("bin/onto.js entry choice", () => {
  it("runs dist/ in a package without src/ (installed, the image)", () => {
    expect(run(layout({ dist: T })).ran).toBe("compiled");
  });

  it("runs the source through tsx in a checkout without a build", () => {
    const { ran, why } = run(layout({ src: { "cli/main.ts": T } }));
    expect(ran).toBe("source");
    expect(why).toContain("dist/ is not built");
  });

  it("runs dist/ when it is newer than every source file", () => {
    expect(run(layout({ dist: T + 10, src: { "cli/main.ts": T, "api/a.ts": T + 5 } })).ran).toBe("compiled");
  });

  it("runs the source when one source file is newer than the build, naming it", () => {
    const { ran, why } = run(layout({ dist: T + 10, src: { "cli/main.ts": T, "api/a.ts": T + 20 } }));
    expect(ran).toBe("source");
    expect(why).toContain(join("src", "api", "a.ts"));
  });

  it("ignores test files: editing a test does not pass over the build", () => {
    expect(run(layout({ dist: T + 10, src: { "cli/main.ts": T, "api/a.test.ts": T + 20 } })).ran).toBe(
      "compiled",
    );
  });

  it("runs the source when a source file was removed after the build (its directory changed)", () => {
    const root = layout({ dist: T + 10, src: { "cli/main.ts": T, "api/a.ts": T } });
    rmSync(join(root, "src", "api", "a.ts"));
    const { ran, why } = run(root);
    expect(ran).toBe("source");
    expect(why).toContain(join("src", "api"));
  });

  it("runs the bundle in a package without src/ that carries both builds", () => {
    expect(run(layout({ dist: T, bundle: T })).ran).toBe("bundled");
  });

  it("runs the bundle when it is newer than every source file", () => {
    expect(run(layout({ dist: T + 10, bundle: T + 11, src: { "cli/main.ts": T } })).ran).toBe("bundled");
  });

  it("runs dist/ when only the bundle is older than a source file (tsc run again, not bundled)", () => {
    expect(run(layout({ dist: T + 30, bundle: T + 11, src: { "cli/main.ts": T + 20 } })).ran).toBe(
      "compiled",
    );
  });

  it("runs the source when both builds are older than a source file", () => {
    const { ran, why } = run(layout({ dist: T + 10, bundle: T + 11, src: { "cli/main.ts": T + 20 } }));
    expect(ran).toBe("source");
    expect(why).toContain(join("src", "cli", "main.ts"));
  });
});
