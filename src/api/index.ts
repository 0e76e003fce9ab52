// The public API of src/api: the OntoPlatform resource's types, schema, defaults, components.
export * from "./constants.js";
export * from "./labels.js";
export * from "./postgres-roles.js";
export {
  CONDITION,
  CONDITION_TYPES,
  HEALING_CONDITION_TYPES,
  REASON,
  reasonDocs,
  type ConditionType,
  type Reason,
  type ReasonDoc,
} from "./conditions.js";
export {
  MAX_PLATFORM_NAME,
  MAX_REPLICAS,
  MAX_STORAGE,
  OntoPlatformSpecSchema,
  OntoPlatformStatusSchema,
  PLATFORM_PHASES,
  VERTICAL_SCALING_MODES,
} from "./schema.js";
export type {
  ComponentState,
  Condition,
  MemoryOverride,
  OntoPlatform,
  OntoPlatformMetadata,
  OntoPlatformSpec,
  OntoPlatformStatus,
  PlaneState,
  PlatformPhase,
  PostgresMemberStatus,
  PostgresStatus,
  ResolvedSpec,
  UpgradeStatus,
  VerticalScalingMode,
  VerticalState,
  CertificateState,
} from "./schema.js";
export { resolveSpec, topicReplicationFactor } from "./defaults.js";
export {
  COMPONENTS,
  PLANES,
  componentByName,
  componentSpec,
  enabledComponents,
  isEnabled,
} from "./components.js";
export type { ComponentInfo, ComponentName, Plane, ResolvedComponent } from "./components.js";
export { Quantity, readableBytes } from "./quantity.js";
export { MAX_MESSAGE, boundedList, boundedText } from "./messages.js";
export { ontoPlatformCrd, ontoPlatformCrdYaml } from "./crd.js";
export { validateOntoPlatform, validateSpec } from "./validate.js";
export type { ValidationIssue } from "./validate.js";
export { INPUT_LIMITS, validateYamlStream } from "./documents.js";
export { withSection, type GeneratedSection } from "./generated-section.js";
export type { DocumentReport } from "./documents.js";
export {
  IMAGE_DIGEST,
  IMAGE_REPOSITORY,
  IMAGE_ROLES,
  IMAGE_TAG,
  INFRASTRUCTURE_IMAGES,
  OntoReleaseSpecSchema,
  OntoReleaseStatusSchema,
  PLATFORM_SERVICES,
  UPGRADE_PATHS,
  UPGRADE_STEPS,
} from "./release-schema.js";
export type {
  ImageRole,
  InfrastructureImage,
  IrreversibleStep,
  OntoRelease,
  OntoReleaseSpec,
  OntoReleaseStatus,
  PlatformService,
  ReleaseImage,
  ResolvedReleaseSpec,
  UpgradePath,
  UpgradeRule,
  UpgradeStepName,
} from "./release-schema.js";
export { resolveRelease } from "./release-defaults.js";
export { ontoReleaseCrd, ontoReleaseCrdYaml } from "./release-crd.js";
export { validateOntoRelease } from "./validate.js";
