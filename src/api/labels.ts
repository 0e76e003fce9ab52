// The labels every object of a platform carries (the Kubernetes recommended app.kubernetes.io set),
// named once: render writes them, the controllers select and map by them, the CLI queries by them.

/** The component: postgres, gateway, ... */
export const NAME_LABEL = "app.kubernetes.io/name";
/** The OntoPlatform the object belongs to (its metadata.name). */
export const INSTANCE_LABEL = "app.kubernetes.io/instance";
/** The plane: infrastructure, control-plane, ... */
export const COMPONENT_LABEL = "app.kubernetes.io/component";
export const PART_OF_LABEL = "app.kubernetes.io/part-of";
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** The platform version whose image the object runs. */
export const VERSION_LABEL = "app.kubernetes.io/version";

/** Value of the part-of label: the product. */
export const PART_OF = "coomia-dip";
/** Value of the managed-by label: what the operator applies, and only that, it may prune. */
export const MANAGED_BY = "onto-operator";
