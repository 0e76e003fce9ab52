// One informer per watched source (kind + namespace + selectors), shared by every controller that
// asks for it, so a kind is listed and watched once per process whatever the number of controllers.
import type { KubeClient, KubeObject } from "../kube/index.js";
import type { Clock } from "./clock.js";
import { Informer, type InformerOptions, type InformerSource } from "./informer.js";
import type { Logger } from "./logging.js";

export type InformerSettings = Omit<
  InformerOptions<KubeObject>,
  keyof InformerSource | "clock" | "logger" | "transform" | "indexers"
>;

export class InformerFactory {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private started = false;

  constructor(
    private readonly client: KubeClient,
    private readonly defaults: InformerSettings & { clock?: Clock; logger?: Logger } = {},
  ) {}

  /**
   * The shared informer for `source`, created on first use (and started at once if the factory
   * already runs). A transform passed here applies only if this call creates the informer.
   */
  informer<T extends KubeObject = KubeObject>(
    source: InformerSource,
    extra: Pick<InformerOptions<T>, "transform"> = {},
  ): Informer<T> {
    const id = sourceId(source);
    let informer = this.informers.get(id);
    if (!informer) {
      const created = new Informer<T>(this.client, { ...this.defaults, ...source, ...extra });
      // Informers differ only in T; the map holds them as the base object type.
      informer = created as unknown as Informer<KubeObject>;
      this.informers.set(id, informer);
      if (this.started) informer.start();
    }
    return informer as unknown as Informer<T>;
  }

  all(): Informer<KubeObject>[] {
    return [...this.informers.values()];
  }

  start(): void {
    this.started = true;
    for (const informer of this.informers.values()) informer.start();
  }

  allSynced(): boolean {
    return this.all().every((i) => i.hasSynced());
  }

  async waitForSync(): Promise<void> {
    await Promise.all(this.all().map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    this.started = false;
    await Promise.all(this.all().map((i) => i.stop()));
  }
}

function sourceId(s: InformerSource): string {
  return [s.apiVersion, s.kind, s.namespace ?? "", s.labelSelector ?? "", s.fieldSelector ?? ""].join("|");
}
