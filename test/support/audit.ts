// The operator's audit log as the tests read it: one parsed line per action, oldest first, from
// one file or several (an operator restarted), optionally of one actor only. A file not written
// yet holds no lines.
import { readFileSync } from "node:fs";

export interface AuditLine {
  time: string;
  actor: string;
  verb: string;
  reason: string;
  message: string;
  outcome: "ok" | "error";
  reconcileId: string;
  object: { apiVersion: string; kind: string; namespace?: string; name: string };
}

export function auditLines(file: string | string[], actor?: string): AuditLine[] {
  const files = Array.isArray(file) ? file : [file];
  return files
    .flatMap((f) => {
      try {
        return readFileSync(f, "utf8").split("\n");
      } catch {
        return [];
      }
    })
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as AuditLine)
    .filter((l) => actor === undefined || l.actor === actor)
    .sort((a, b) => a.time.localeCompare(b.time));
}
