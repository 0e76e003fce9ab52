// The commands of `onto`, with what `onto --help` says of each. main.ts imports a command's
// module only when that command runs, so `onto validate` never loads the API client and
// `onto --help` loads no command at all: the help lists these entries. Each command module takes
// its description from here; a unit test checks that every entry's term is its command's.
import type { Command } from "commander";

export interface CommandEntry {
  name: string;
  /** The command's description: its first line in `onto --help`, all of it in `onto NAME --help`. */
  summary: string;
  /** How `onto --help` writes its usage, e.g. "status [options] <name>". */
  term: string;
  load: () => Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "cluster",
    summary:
      "Manage the embedded local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, KWOK)",
    term: "cluster",
    load: async () => (await import("./cluster.js")).clusterCommand(),
  },
  {
    name: "render",
    summary: "Print the objects the operator would apply for an OntoPlatform file, without a cluster",
    term: "render [options]",
    load: async () => (await import("./render.js")).renderCommand(),
  },
  {
    name: "operator",
    summary: "run the operator: reconcile every OntoPlatform in the watched namespaces",
    term: "operator [options]",
    load: async () => (await import("./operator.js")).operatorCommand(),
  },
  {
    name: "validate",
    summary:
      "Check OntoPlatform files: offline with the CRD's schema and CEL rules, or --server for a dry run",
    term: "validate [options]",
    load: async () => (await import("./validate.js")).validateCommand(),
  },
  {
    name: "status",
    summary:
      "Show a platform: planes and components with ready/desired, the upgrade in flight, the pod restarts that wait, conditions, recent Events",
    term: "status [options] <name>",
    load: async () => (await import("./status.js")).statusCommand(),
  },
  {
    name: "upgrade",
    summary:
      "Start an upgrade: set spec.version; --watch prints its restart plan, then progress until done or failed",
    term: "upgrade [options] <name>",
    load: async () => (await import("./upgrade.js")).upgradeCommand(),
  },
  {
    name: "switchover",
    summary:
      "Make another Postgres member the primary (planned: no acknowledged write is lost); without --to, the most advanced streaming standby",
    term: "switchover [options] <name>",
    load: async () => (await import("./switchover.js")).switchoverCommand(),
  },
  {
    name: "pause",
    summary: "Stop the operator from changing a platform (spec.paused: true); status is still reported",
    term: "pause [options] <name>",
    load: async () => (await import("./pause.js")).pauseCommand(),
  },
  {
    name: "resume",
    summary: "Let the operator reconcile a paused platform again (spec.paused: false)",
    term: "resume [options] <name>",
    load: async () => (await import("./pause.js")).resumeCommand(),
  },
  {
    name: "approve-restarts",
    summary:
      "Let a platform's held pod restarts go ahead now, outside a maintenance window (annotation onto.paas/approve-restarts=true); --revoke goes back to windows",
    term: "approve-restarts [options] <name>",
    load: async () => (await import("./approve-restarts.js")).approveRestartsCommand(),
  },
  {
    name: "diff",
    summary:
      "Show what applying an OntoPlatform file would change on the cluster (server-side dry run); exit 1 when it would",
    term: "diff [options]",
    load: async () => (await import("./diff.js")).diffCommand(),
  },
  {
    name: "images",
    summary: "List every image of a platform version (for mirroring into an air-gapped registry)",
    term: "images [options]",
    load: async () => (await import("./images.js")).imagesCommand(),
  },
  {
    name: "demo",
    summary:
      "Local cluster + operator + the production sample, with its status live until Running (npm run demo)",
    term: "demo [options]",
    load: async () => (await import("./demo.js")).demoCommand(),
  },
];

/** The description of command `name` (throws for a name not in the catalog). */
export function summaryOf(name: string): string {
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) throw new Error(`cli: no command ${name} in the catalog`);
  return entry.summary;
}
