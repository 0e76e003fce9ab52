// How the operator turns an OntoPlatform and what the cluster holds into render's input. Shared
// by the reconciler (reading its caches) and by `onto diff` (reading the cluster directly), so
// both render exactly the same objects for the same platform.
import { randomBytes } from "node:crypto";
import { INSTANCE_LABEL, type OntoPlatform, type ResolvedSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { ReleaseCatalog } from "../../release/index.js";
import {
  GENERATED_SECRET_LABEL,
  renderPlatform,
  type Capabilities,
  type ExistingSecrets,
  type RenderedObject,
  type SecretGenerator,
  type UpgradeStep,
} from "../../render/index.js";

/** 32 characters from a URL-safe alphabet; `length` caps it for keys that need fewer. */
export const randomSecret: SecretGenerator = ({ length }) =>
  randomBytes(Math.ceil((length * 3) / 4) + 3)
    .toString("base64url")
    .replace(/[-_]/g, "x")
    .slice(0, length);

/** Decoded values of `platformName`'s generated Secrets among `secrets` (others are ignored). */
export function decodeGeneratedSecrets(
  secrets: readonly KubeObject[],
  platformName: string,
): ExistingSecrets {
  const out: Record<string, Record<string, string>> = {};
  for (const secret of secrets) {
    const labels = secret.metadata?.labels;
    if (labels?.[GENERATED_SECRET_LABEL] !== "true" || labels[INSTANCE_LABEL] !== platformName) continue;
    const data = (secret as KubeObject & { data?: Record<string, string> }).data ?? {};
    out[secret.metadata?.name ?? ""] = Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
    );
  }
  return out;
}

export interface PlatformRenderContext {
  capabilities: Capabilities;
  releases: ReleaseCatalog;
  existingSecrets: ExistingSecrets;
  generateSecret: SecretGenerator;
  upgrade?: UpgradeStep | undefined;
}

/** The objects the operator applies for `platform` with `spec`, in apply order. */
export function renderFor(
  platform: OntoPlatform,
  spec: ResolvedSpec,
  ctx: PlatformRenderContext,
): RenderedObject[] {
  return renderPlatform({
    platform: {
      name: platform.metadata.name,
      namespace: platform.metadata.namespace,
      uid: platform.metadata.uid ?? "",
    },
    spec,
    release: ctx.releases.releaseFor(spec.version),
    releaseOf: (version) => ctx.releases.releaseFor(version),
    capabilities: ctx.capabilities,
    overrides: platform.status?.healing?.memoryOverrides ?? {},
    vertical: platform.status?.verticalScaling ?? {},
    ...(ctx.upgrade ? { upgrade: ctx.upgrade } : {}),
    existingSecrets: ctx.existingSecrets,
    generateSecret: ctx.generateSecret,
  });
}
