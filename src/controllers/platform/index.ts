// The platform reconciler (seed 3.1), and what others need of the way it renders and applies: the
// render input built from what the cluster holds (shared with `onto diff`), the applied-hash
// annotation it puts on every object, a tenant namespace's Pod Security labels, and how a
// StatefulSet's immutable fields and claim growth are judged (for `onto diff`).
export { PlatformReconciler, type PlatformReconcilerDeps } from "./reconciler.js";
export { APPLIED_HASH_ANNOTATION, coveredBy, withAppliedHash } from "./drift.js";
export { POD_SECURITY_LABELS, namespaceSecurity, type NamespaceLabels } from "./namespace-security.js";
export {
  decodeGeneratedSecrets,
  randomSecret,
  renderFor,
  type PlatformRenderContext,
} from "./render-input.js";
export { planCertificates, platformCertificateName, withPlatformCertificate } from "./certificates.js";
export { CERTIFICATE_REF } from "./cert-manager.js";
export { IMMUTABLE_STATEFULSET_FIELDS, immutableChanges } from "./statefulset-recreate.js";
export {
  CLAIM_REF,
  STORAGE_CLASS_REF,
  planVolumeGrowth,
  withKeptStorage,
  type ClaimGrowth,
  type VolumeGrowth,
} from "./volume-growth.js";
