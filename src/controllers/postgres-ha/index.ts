export {
  PostgresHa,
  CACHE_BEHIND_MESSAGE,
  FAILOVER_COOLDOWN_MS,
  ROLLING_UPDATE_REASON,
  type PostgresHaDeps,
} from "./ha.js";
export { registerPostgresHa, type PostgresHaRegistration } from "./register.js";
export { decide, type HaDecision, type HaInput, type MemberView } from "./decisions.js";
export { STREAMING_STANDBY } from "./rolling.js";
