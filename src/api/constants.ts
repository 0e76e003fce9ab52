// Names of the OntoPlatform API, as the API server knows them.
export const GROUP = "onto.paas";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}` as const;
export const KIND = "OntoPlatform";
export const LIST_KIND = "OntoPlatformList";
export const PLURAL = "ontoplatforms";
export const SINGULAR = "ontoplatform";
export const SHORT_NAMES = ["onto"] as const;
export const CATEGORIES = ["coomia"] as const;
/** Name of the CustomResourceDefinition object. */
export const CRD_NAME = `${PLURAL}.${GROUP}`;

// The OntoRelease API (cluster-scoped): one platform version as data.
export const RELEASE_KIND = "OntoRelease";
export const RELEASE_LIST_KIND = "OntoReleaseList";
export const RELEASE_PLURAL = "ontoreleases";
export const RELEASE_SINGULAR = "ontorelease";
export const RELEASE_SHORT_NAMES = ["ontorel"] as const;
export const RELEASE_CRD_NAME = `${RELEASE_PLURAL}.${GROUP}`;

/** apiVersion and kind of the resource: the reference every reader and writer of it uses. */
export const PLATFORM_REF = { apiVersion: API_VERSION, kind: KIND } as const;
