// Which optional APIs the cluster serves (ServiceMonitor, VerticalPodAutoscaler, custom metrics):
// looked up at start, then again every ten minutes, so an API installed later is rendered for
// without a restart. Ten minutes, not one: each look-up is five GETs (/api, /apis and the optional
// group/versions), which were most of an idle operator's requests; installing one of these APIs is
// rare and its objects are only added, never needed for the platform to run. A watch on
// CustomResourceDefinitions would see a new CRD at once, but it needs read access to every CRD of
// the cluster (the operator is deliberately granted none), caches their whole schemas, and would
// not see custom.metrics.k8s.io, which is an aggregated API, not a CRD.
import type { Discovery } from "../kube/index.js";
import { OPTIONAL_APIS, capabilitiesFrom, type Capabilities } from "../render/index.js";

/** How often the optional APIs are looked for again (the operator's --discovery-interval). */
export const DISCOVERY_INTERVAL_MS = 10 * 60_000;

/** Which optional APIs the cluster serves (also what `onto diff` renders for). */
export async function discoverCapabilities(client: { discovery: Discovery }): Promise<Capabilities> {
  const served = new Set<string>();
  await Promise.all(
    OPTIONAL_APIS.map(async (api) => {
      const has = await (
        api.kind
          ? client.discovery.hasResource(api.apiVersion, api.kind)
          : client.discovery.hasGroupVersion(api.apiVersion)
      ).catch(() => false);
      if (has) served.add(api.capability);
    }),
  );
  return capabilitiesFrom((api) => served.has(api.capability));
}

/** The capabilities found at start, refreshed every `intervalMs` until stopped. */
export class CapabilityPoll {
  private found: Capabilities;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly client: { discovery: Discovery },
    initial: Capabilities,
    private readonly opts: {
      intervalMs?: number | undefined;
      /** A look-up failed: the last answer is kept. */
      onError: (err: unknown) => void;
    },
  ) {
    this.found = initial;
    this.schedule();
  }

  /** The last answer. */
  current(): Capabilities {
    return this.found;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.client.discovery.invalidate();
      discoverCapabilities(this.client)
        .then((found) => (this.found = found), this.opts.onError)
        .finally(() => this.schedule());
    }, this.opts.intervalMs ?? DISCOVERY_INTERVAL_MS);
    // The poll alone does not keep the process alive.
    this.timer.unref();
  }
}
