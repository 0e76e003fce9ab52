// Healing (seed 5.1, issue 7): the healer, registered on the operator's Manager.
export { Healer, platformKeyOfPod, type HealerDeps } from "./healer.js";
export { nodeHealthChanged, registerHealer, type HealerRegistration } from "./register.js";
export { inPool, isNotReady } from "./nodes.js";
