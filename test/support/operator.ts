// The one fixture of the cluster tests that run the operator: called at the top of a test file, it
// installs the CRD, creates the file's namespaces (deleted after the file), starts the operator on
// them under its generated roles (startOperator), optionally applies a platform to each namespace
// and waits until it is Running, and stops the operator after the file's tests, checking secret
// hygiene on the way. The client and the namespace names are there at once; the operator from the
// first test on.
import { afterAll, beforeAll } from "vitest";
import type { OntoPlatform } from "../../src/api/index.js";
import type { OperatorOptions, RunningOperator } from "../../src/controllers/index.js";
import type { KubeClient } from "../../src/kube/index.js";
import { createTestNamespace, testNamespaceName } from "./cluster.js";
import { adminClient, installCrd, startOperator, tlsSecret, waitForPhase } from "./platform.js";

export type TestOperator = RunningOperator & { auditLog: string; logFile: string; kubeconfig: string };

export interface OperatorSetup {
  /** Prefixes of the namespaces to create and watch, one namespace each (the first is `ns`). */
  namespaces: string[];
  /** Labels of every namespace (e.g. a Pod Security level enforced from the start). */
  labels?: Record<string, string>;
  /** Creates the TLS Secret `onto-tls` in every namespace before the operator starts. */
  tlsSecret?: boolean;
  /** Runs before the operator starts (objects the platform needs, nodes). */
  before?: (fixture: OperatorFixture) => Promise<void>;
  operator?: Partial<OperatorOptions>;
  /** The platform to apply in a namespace, applied once the operator runs; waited for until Running. */
  platform?: (namespace: string) => OntoPlatform;
  /** How long the platforms may take to be Running (default 180 s). */
  waitMs?: number;
  /** Runs after the operator stopped (cleaning up what `before` made outside the namespaces). */
  after?: () => Promise<void>;
}

export interface OperatorFixture {
  /** An admin client (the test's own, not the operator's). */
  readonly client: KubeClient;
  /** The first namespace. */
  readonly ns: string;
  readonly namespaces: string[];
  /** The operator (from the first test on). */
  readonly operator: TestOperator;
  /** How long the platforms took from apply to Running, in ms (0 without a platform). */
  readonly msToRunning: number;
  /** Stops the operator and starts a new one on the same namespaces (a restart); `stopped` runs between. */
  restartOperator(stopped?: () => unknown): Promise<TestOperator>;
}

export function useOperator(setup: OperatorSetup): OperatorFixture {
  const namespaces = setup.namespaces.map(testNamespaceName);
  let operator: TestOperator | undefined;
  let msToRunning = 0;
  const fixture: OperatorFixture = {
    client: adminClient(),
    ns: namespaces[0] ?? "",
    namespaces,
    get operator(): TestOperator {
      if (!operator) throw new Error("the operator runs from the first test on (useOperator's beforeAll)");
      return operator;
    },
    get msToRunning() {
      return msToRunning;
    },
    restartOperator: async (stopped) => {
      await operator?.stop();
      operator = undefined;
      await stopped?.();
      operator = await startOperator(namespaces, setup.operator ?? {});
      return operator;
    },
  };
  const { client } = fixture;

  beforeAll(async () => {
    await installCrd(client);
    for (const [i, name] of namespaces.entries())
      await createTestNamespace(setup.namespaces[i] ?? "", setup.labels ?? {}, name);
    if (setup.tlsSecret) for (const ns of namespaces) await client.apply(await tlsSecret(ns, "onto-tls"));
    await setup.before?.(fixture);
    operator = await startOperator(namespaces, setup.operator ?? {});
    const platform = setup.platform;
    if (!platform) return;
    const started = Date.now();
    const platforms = namespaces.map(platform);
    for (const p of platforms) await client.apply(p);
    await Promise.all(
      platforms.map((p) => waitForPhase(client, p.metadata.namespace, p.metadata.name, "Running")),
    );
    msToRunning = Date.now() - started;
  });

  afterAll(async () => {
    await operator?.stop();
    await setup.after?.();
  });

  return fixture;
}
