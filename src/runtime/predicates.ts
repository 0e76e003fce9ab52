// Filters on watch events, deciding which changes are worth a reconcile (controller-runtime's
// predicates). A predicate that returns false drops the event before it reaches the queue.
import type { KubeObject } from "../kube/index.js";

export type ChangeEvent<T extends KubeObject = KubeObject> =
  { type: "add"; obj: T } | { type: "update"; old: T; obj: T } | { type: "delete"; obj: T };

export type Predicate<T extends KubeObject = KubeObject> = (event: ChangeEvent<T>) => boolean;

/**
 * Updates pass only when metadata.generation changed (the spec changed, not only the status).
 * Kinds without a generation fall back to resourceVersion. Adds and deletes always pass.
 */
export const generationChanged: Predicate = (e) => {
  if (e.type !== "update") return true;
  const before = e.old.metadata?.generation;
  const after = e.obj.metadata?.generation;
  if (before === undefined || after === undefined)
    return e.old.metadata?.resourceVersion !== e.obj.metadata?.resourceVersion;
  return before !== after;
};

export const labelsChanged: Predicate = (e) =>
  e.type !== "update" || !sameRecord(e.old.metadata?.labels, e.obj.metadata?.labels);

export const annotationsChanged: Predicate = (e) =>
  e.type !== "update" || !sameRecord(e.old.metadata?.annotations, e.obj.metadata?.annotations);

/** Passes when any of `predicates` passes. */
export function anyOf<T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return (e) => predicates.some((p) => p(e));
}

function sameRecord(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  return ka.length === kb.length && ka.every((k) => a?.[k] === b?.[k]);
}
