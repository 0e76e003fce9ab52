// Restart-free operator upgrades: the committed golden files hold every object the operator
// rendered for a set of specs; the current code must render the same, or the difference must be
// declared in template-changes.ts with the restart it causes (checked against what actually
// changes in the pod templates). A new operator version therefore restarts no pod that its
// release notes do not name.
import { describe, expect, it } from "vitest";
import { restartReasons } from "../controllers/shared/restart-plan.js";
import { goldenCases, readGoldenFiles, renderGolden, type GoldenFile } from "../../test/support/golden.js";
import {
  TEMPLATE_REVISION,
  TEMPLATE_REVISION_ANNOTATION,
  changesSince,
  covers,
  type DeclaredChange,
  type RenderedObject,
} from "./index.js";
import { firstDifference } from "../controllers/platform/drift.js";

const key = (o: RenderedObject) => `${o.kind}/${o.metadata.name}`;
const componentOf = (o: RenderedObject) => o.metadata.labels["app.kubernetes.io/name"];

/** Every difference between a golden file and the current render that no declared change covers. */
function undeclaredDifferences(
  golden: GoldenFile,
  current: RenderedObject[],
  declared: readonly DeclaredChange[] = changesSince(golden.revision),
): string[] {
  const before = new Map(golden.objects.map((o) => [key(o), o]));
  const after = new Map(current.map((o) => [key(o), o]));
  const problems: string[] = [];
  const allowed = (o: RenderedObject, restart: string | undefined) =>
    declared.some(
      (c) => covers(c, o.kind, componentOf(o)) && (restart === undefined || c.restart === restart),
    );
  for (const [k, o] of after) if (!before.has(k) && !allowed(o, undefined)) problems.push(`${k}: added`);
  for (const [k, o] of before) if (!after.has(k) && !allowed(o, undefined)) problems.push(`${k}: removed`);
  // The revision stamp itself changes with every declared change; what it stamps is compared.
  const unstamped = (o: RenderedObject): RenderedObject => {
    const annotations = o.metadata.annotations;
    if (!annotations || !(TEMPLATE_REVISION_ANNOTATION in annotations)) return o;
    const { [TEMPLATE_REVISION_ANNOTATION]: _stamp, ...rest } = annotations;
    return { ...o, metadata: { ...o.metadata, annotations: rest } };
  };
  for (const [k, stamped] of after) {
    const was = before.get(k) && unstamped(before.get(k) as RenderedObject);
    if (!was) continue;
    const now = unstamped(stamped);
    const path = firstDifference(now, was) ?? firstDifference(was, now);
    if (path === undefined) continue;
    const { reasons } = restartReasons(was, now);
    if (reasons.length === 0) {
      if (!allowed(now, undefined)) problems.push(`${k}: ${path} differs (no pod restart), not declared`);
      continue;
    }
    for (const reason of reasons)
      if (!allowed(now, reason))
        problems.push(
          `${k}: ${path} differs: pods restart (${reason}), not declared with restart "${reason}"`,
        );
  }
  return problems;
}

describe("golden files of every rendered object", () => {
  const files = readGoldenFiles();

  it("cover every case, and no file is newer than the code", () => {
    expect(Object.keys(files).sort()).toEqual(Object.keys(goldenCases()).sort());
    for (const file of Object.values(files)) expect(file.revision).toBeLessThanOrEqual(TEMPLATE_REVISION);
  });

  for (const [name, file] of Object.entries(files))
    it(`${name}: the current code renders the same, or declares the difference`, () => {
      const problems = undeclaredDifferences(file, renderGolden(file.input));
      expect(
        problems,
        `undeclared render changes against ${name}.yaml (revision ${file.revision}): declare each in ` +
          "src/render/template-changes.ts with its restart, then run `npm run golden`",
      ).toEqual([]);
    });
});

describe("the golden-file check", () => {
  const golden = readGoldenFiles()["production"];
  if (!golden) throw new Error("no production golden file");
  const edited = (edit: (objects: RenderedObject[]) => void): RenderedObject[] => {
    const objects = structuredClone(golden.objects);
    edit(objects);
    return objects;
  };
  const postgres = (objects: RenderedObject[]) => {
    const found = objects.find((o) => o.kind === "StatefulSet" && o.metadata.name === "postgres");
    if (!found) throw new Error("no postgres StatefulSet");
    return found.spec as { template: { spec: { containers: { image: string; env?: unknown[] }[] } } };
  };
  const newImage = (objects: RenderedObject[]) => {
    const c = postgres(objects).template.spec.containers[0];
    if (c) c.image = `${c.image}-rebuilt`;
  };
  const change = (restart: DeclaredChange["restart"]): DeclaredChange => ({
    revision: golden.revision + 1,
    components: ["postgres"],
    kinds: ["StatefulSet"],
    restart,
    why: "test",
  });

  it("fails on an undeclared pod-template change, naming the object, the field and the restart", () => {
    expect(undeclaredDifferences(golden, edited(newImage), [])).toEqual([
      'StatefulSet/postgres: .spec.template.spec.containers[name=postgres].image differs: pods restart (image), not declared with restart "image"',
    ]);
  });

  it("passes when the change is declared with its restart, and not with another restart", () => {
    expect(undeclaredDifferences(golden, edited(newImage), [change("image")])).toEqual([]);
    expect(undeclaredDifferences(golden, edited(newImage), [change("none")])).toHaveLength(1);
  });

  it("fails on an added or removed object", () => {
    const problems = undeclaredDifferences(
      golden,
      edited((objects) =>
        objects.splice(
          objects.findIndex((o) => o.kind === "PodDisruptionBudget"),
          1,
        ),
      ),
      [],
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^PodDisruptionBudget\/.*: removed$/);
  });
});
