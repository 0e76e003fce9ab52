// The release catalog the operator runs with: its built-in releases plus the OntoRelease objects
// in its informer cache, rebuilt (catalogFrom) on first use after the cache changed. The
// reconciler and the upgrade orchestrator hold the same instance, so both always see one catalog.
import type { OntoRelease } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import {
  BUILT_IN_RELEASES,
  PRODUCT_CATALOG,
  catalogFrom,
  type Release,
  type ReleaseCatalog,
  type ReleaseVerdict,
} from "../../release/index.js";
import type { Store } from "../../runtime/index.js";

export class LiveReleaseCatalog implements ReleaseCatalog {
  private built: { catalog: ReleaseCatalog; verdicts: Map<string, ReleaseVerdict> } | undefined;

  /** `store`: the OntoRelease cache; absent (the CRD is not served): the built-in releases only. */
  constructor(
    private store?: Store<KubeObject>,
    private readonly builtIn: readonly Release[] = BUILT_IN_RELEASES,
  ) {}

  /** The OntoRelease CRD appeared after start: from now on the catalog reads its cache. */
  attach(store: Store<KubeObject>): void {
    this.store = store;
    this.built = undefined;
  }

  /** The cache changed: the next lookup rebuilds. Called from the informer's event handler. */
  invalidate(): void {
    this.built = undefined;
  }

  private current(): { catalog: ReleaseCatalog; verdicts: Map<string, ReleaseVerdict> } {
    if (!this.store) return { catalog: PRODUCT_CATALOG, verdicts: new Map() };
    this.built ??= catalogFrom(this.builtIn, this.store.list() as unknown as OntoRelease[]);
    return this.built;
  }

  get versions(): readonly string[] {
    return this.current().catalog.versions;
  }

  find(version: string): Release | undefined {
    return this.current().catalog.find(version);
  }

  releaseFor(version: string): Release {
    return this.current().catalog.releaseFor(version);
  }

  whyMissing(version: string): string | undefined {
    return this.current().catalog.whyMissing?.(version);
  }

  /** What the operator made of the OntoRelease object `name` (undefined: not in the cache). */
  verdict(name: string): ReleaseVerdict | undefined {
    return this.current().verdicts.get(name);
  }
}
