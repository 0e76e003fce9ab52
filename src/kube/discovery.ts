// Which group/versions and resources the API server serves. Resolves apiVersion + kind to the
// resource's URL path, and answers questions such as "is monitoring.coreos.com/v1 served?".
// Answers are cached; a kind that is missing from the cache triggers one fresh lookup, so a CRD
// installed after start is found without restarting.
import { NotFoundError, UnknownResourceError } from "./errors.js";

export interface ApiResource {
  /** Plural resource name used in URLs, e.g. "deployments". */
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

interface ApiResourceList {
  groupVersion?: string;
  resources?: ApiResource[];
}

interface ApiGroupList {
  groups?: { versions?: { groupVersion: string }[] }[];
}

interface ApiVersions {
  versions?: string[];
}

export type GetJson = (path: string) => Promise<unknown>;

export class Discovery {
  private readonly byGroupVersion = new Map<string, Promise<ApiResource[]>>();
  private groupVersions: { at: number; value: Promise<Set<string>> } | undefined;

  constructor(
    private readonly getJson: GetJson,
    /** How long the list of served group/versions is trusted before it is fetched again. */
    private readonly groupVersionsTtlMs = 60_000,
  ) {}

  /** The resource serving `kind` in `apiVersion`; throws UnknownResourceError if none. */
  async resource(apiVersion: string, kind: string): Promise<ApiResource> {
    const cached = await this.resources(apiVersion).catch(() => []);
    const hit = cached.find((r) => r.kind === kind && !r.name.includes("/"));
    if (hit) return hit;
    this.byGroupVersion.delete(apiVersion);
    const fresh = await this.resources(apiVersion).catch((err: unknown) => {
      if (err instanceof NotFoundError) return [];
      throw err;
    });
    const found = fresh.find((r) => r.kind === kind && !r.name.includes("/"));
    if (!found) throw new UnknownResourceError(apiVersion, kind);
    return found;
  }

  /** Whether the server serves `kind` in `apiVersion` (looks again if it did not last time). */
  async hasResource(apiVersion: string, kind: string): Promise<boolean> {
    try {
      await this.resource(apiVersion, kind);
      return true;
    } catch (err) {
      if (err instanceof UnknownResourceError) return false;
      throw err;
    }
  }

  /** Every group/version the server serves, e.g. "v1", "apps/v1", "monitoring.coreos.com/v1". */
  async serverGroupVersions(opts: { refresh?: boolean } = {}): Promise<Set<string>> {
    const now = Date.now();
    if (opts.refresh || !this.groupVersions || now - this.groupVersions.at > this.groupVersionsTtlMs) {
      const value = this.fetchGroupVersions();
      this.groupVersions = { at: now, value };
      value.catch(() => (this.groupVersions = undefined));
    }
    return this.groupVersions.value;
  }

  async hasGroupVersion(groupVersion: string, opts: { refresh?: boolean } = {}): Promise<boolean> {
    return (await this.serverGroupVersions(opts)).has(groupVersion);
  }

  /** Forgets everything, e.g. after CRDs were installed or removed. */
  invalidate(): void {
    this.byGroupVersion.clear();
    this.groupVersions = undefined;
  }

  private resources(apiVersion: string): Promise<ApiResource[]> {
    let entry = this.byGroupVersion.get(apiVersion);
    if (!entry) {
      entry = this.getJson(apiVersionPath(apiVersion)).then(
        (body) => (body as ApiResourceList).resources ?? [],
      );
      entry.catch(() => this.byGroupVersion.delete(apiVersion));
      this.byGroupVersion.set(apiVersion, entry);
    }
    return entry;
  }

  private async fetchGroupVersions(): Promise<Set<string>> {
    const [core, groups] = await Promise.all([this.getJson("/api"), this.getJson("/apis")]);
    const result = new Set<string>((core as ApiVersions).versions ?? []);
    for (const g of (groups as ApiGroupList).groups ?? []) {
      for (const v of g.versions ?? []) result.add(v.groupVersion);
    }
    return result;
  }
}

/** "/api/v1" for the core group, "/apis/<group>/<version>" otherwise. */
export function apiVersionPath(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}
