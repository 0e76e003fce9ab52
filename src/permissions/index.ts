// The public surface of permissions/: what other layers may use of the operator's install files
// (its Deployment's facts, RBAC and the access a ServiceAccount is granted).
export * from "./operator-deployment.js";
export * from "./rbac.js";
export * from "./install-files.js";
export * from "./service-account-access.js";
