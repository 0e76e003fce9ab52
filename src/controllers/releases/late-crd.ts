// The OntoRelease CRD installed after the operator started: each discovery poll asks again whether
// the API server serves OntoRelease, and the first time it does, the release informer and the
// status controller start in the running operator (no restart). Asked only while the CRD is
// missing; once started, never again (a CRD deleted later leaves the informer retrying, as for
// any watched type).
import type { Logger } from "../../runtime/index.js";

export interface LateCrd {
  /** Whether the releases are being watched (from start, or since the CRD appeared). */
  readonly watching: boolean;
  /** After a discovery poll: starts the releases when the CRD is served now. */
  recheck(): Promise<void>;
}

export function lateCrd(opts: {
  watchingFromStart: boolean;
  served: () => Promise<boolean>;
  start: () => void;
  logger: Logger;
}): LateCrd {
  let watching = opts.watchingFromStart;
  let checking: Promise<void> | undefined;
  const check = async (): Promise<void> => {
    if (watching || !(await opts.served().catch(() => false))) return;
    watching = true;
    opts.logger.info({}, "the OntoRelease CRD is served now: watching OntoRelease objects");
    opts.start();
  };
  return {
    get watching() {
      return watching;
    },
    recheck: () => {
      if (watching) return Promise.resolve();
      // One check at a time: a poll that overlaps a slow one waits for its answer.
      checking ??= check().finally(() => (checking = undefined));
      return checking;
    },
  };
}
