// Postgres roles as state, named once: the pod label the operator sets from what each member
// answers (the Services select by it), and the annotations through which `onto switchover` asks
// for a planned change of primary.
import { GROUP } from "./constants.js";

/** On each Postgres pod: its role as the operator last established it. */
export const POSTGRES_ROLE_LABEL = `${GROUP}/postgres-role`;

export const POSTGRES_ROLES = {
  /** Answers as the primary and is the one status.postgres.currentPrimary names: `postgres` selects it. */
  primary: "primary",
  /** Streams from the primary within maxStandbyLagBytes: `postgres-ro` selects it. */
  standby: "standby",
  /** A standby that does not stream or lags: neither Service selects it. */
  lagging: "lagging",
  /** A former primary (or a second one) that must not take writes until it has rejoined as a standby. */
  fenced: "fenced",
  /** Did not answer: neither Service selects it. */
  unknown: "unknown",
} as const;
export type PostgresRole = (typeof POSTGRES_ROLES)[keyof typeof POSTGRES_ROLES];

/** `onto switchover NAME --to postgres-N`: the member asked for (absent: the most advanced standby). */
export const SWITCHOVER_TO_ANNOTATION = `${GROUP}/switchover-to`;
/** When the switchover was asked for: a new value is a new request (the operator answers each once). */
export const SWITCHOVER_REQUESTED_AT_ANNOTATION = `${GROUP}/switchover-requested-at`;
