// Field-level differences between a live object and what applying would make of it (the
// server-side dry-run result), for `onto diff`. Written by hand because what we need is narrow
// and specific: list elements that carry a `name` are matched by name (containers, env, ports),
// server-maintained metadata and status are skipped, and Secret values are never shown.
export interface FieldChange {
  /** e.g. spec.template.spec.containers[gateway].image */
  path: string;
  /** Absent: the field is added. */
  from?: unknown;
  /** Absent: the field is removed. */
  to?: unknown;
}

/** Fields the API server maintains or that only say when/who: never a difference worth showing. */
const IGNORED = new Set([
  "metadata.managedFields",
  "metadata.resourceVersion",
  "metadata.generation",
  "metadata.creationTimestamp",
  "metadata.deletionTimestamp",
  "metadata.selfLink",
  "metadata.uid",
  "status",
]);

/** Annotations that change with every apply of ours; their cause shows up as its own field. */
export const IGNORED_ANNOTATIONS = new Set(["onto.paas/applied-hash"]);

/** What a Secret's values read as in the output. */
export const HIDDEN = "(hidden)";

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

function child(path: string, key: string): string {
  if (IDENT.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Every element is an object with a distinct string `name`. */
function namedList(list: unknown[]): list is { name: string }[] {
  const names = new Set<string>();
  for (const item of list) {
    if (!isRecord(item) || typeof item.name !== "string" || names.has(item.name)) return false;
    names.add(item.name);
  }
  return true;
}

function walk(from: unknown, to: unknown, path: string, out: FieldChange[]): void {
  if (IGNORED.has(path)) return;
  if (path.startsWith("metadata.annotations[")) {
    const key = JSON.parse(path.slice("metadata.annotations[".length, -1)) as string;
    if (IGNORED_ANNOTATIONS.has(key)) return;
  }
  if (from === undefined && to === undefined) return;
  if (isRecord(from) && isRecord(to)) {
    const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])].sort();
    for (const key of keys) walk(from[key], to[key], child(path, key), out);
    return;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    if (from.length > 0 && to.length > 0 && namedList(from) && namedList(to)) {
      const names = [...new Set([...from.map((i) => i.name), ...to.map((i) => i.name)])];
      for (const name of names)
        walk(
          from.find((i) => i.name === name),
          to.find((i) => i.name === name),
          `${path}[${name}]`,
          out,
        );
      return;
    }
    if (from.length === to.length) {
      from.forEach((item, i) => walk(item, to[i], `${path}[${i}]`, out));
      return;
    }
  }
  if (JSON.stringify(from) === JSON.stringify(to)) return;
  out.push({
    path,
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
  });
}

/**
 * The fields where `to` differs from `from`, in path order. For a Secret, values under data and
 * stringData are replaced by HIDDEN: the output says which key changes, never its value.
 */
export function diffObjects(from: unknown, to: unknown, opts: { secret?: boolean } = {}): FieldChange[] {
  const out: FieldChange[] = [];
  walk(from, to, "", out);
  if (!opts.secret) return out;
  return out.map((c) =>
    /^(data|stringData)\b/.test(c.path)
      ? {
          path: c.path,
          ...(c.from !== undefined ? { from: HIDDEN } : {}),
          ...(c.to !== undefined ? { to: HIDDEN } : {}),
        }
      : c,
  );
}

/** A value on one line: strings as they are (quoted when empty), the rest as JSON, long ones cut. */
export function formatValue(value: unknown, max = 120): string {
  // Checksums and hashes: their first characters are enough to tell them apart.
  if (typeof value === "string" && /^[0-9a-f]{40,}$/.test(value)) return `${value.slice(0, 12)}...`;
  const text = typeof value === "string" ? (value === "" ? '""' : value) : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** One change as text lines; multi-line strings show only the lines that differ. */
export function formatChange(change: FieldChange): string[] {
  const { from, to } = change;
  if (typeof from === "string" && typeof to === "string" && (from.includes("\n") || to.includes("\n"))) {
    const before = from.split("\n");
    const after = to.split("\n");
    return [
      `${change.path}:`,
      ...before.filter((l) => !after.includes(l)).map((l) => `    - ${formatValue(l)}`),
      ...after.filter((l) => !before.includes(l)).map((l) => `    + ${formatValue(l)}`),
    ];
  }
  if (from === undefined) return [`${change.path}: (added) ${formatValue(to)}`];
  if (to === undefined) return [`${change.path}: ${formatValue(from)} (removed)`];
  return [`${change.path}: ${formatValue(from)} -> ${formatValue(to)}`];
}
