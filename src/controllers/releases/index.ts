// Releases as data (issue 18): the live release catalog and the OntoRelease status controller.
export { LiveReleaseCatalog } from "./live-catalog.js";
export { registerReleases, type OperatorReleases } from "./register.js";
export { RELEASE_REF } from "./status.js";
