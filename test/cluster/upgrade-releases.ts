// Test releases for the upgrade cluster tests: versions whose images fail on purpose through the
// KWOK fault stages keyed on the image tag (`-never-ready`, `-crashloop`, `-oom`). They are
// injected into the operator (runOperator({ releases })); the product catalog never holds them.
// No vitest import here: upgrade-operator.child.ts loads this file outside the test runner.
import { catalogWith, releaseFor, type Release, type ReleaseCatalog } from "../../src/release/index.js";

/** 1.5.0's infrastructure, platform services tagged `1.5.1-<mode>`: only the services change. */
export function faultRelease(mode: "never-ready" | "crashloop" | "oom"): Release {
  return { version: `1.5.1-${mode}`, infrastructure: releaseFor("1.5.0").infrastructure };
}

export const TEST_RELEASES: ReleaseCatalog = catalogWith([
  faultRelease("never-ready"),
  faultRelease("crashloop"),
  faultRelease("oom"),
  // Only Kafka changes among the StatefulSets before the services, and its new image crash-loops.
  {
    version: "1.5.2-kafka-crashloop",
    infrastructure: { ...releaseFor("1.5.0").infrastructure, kafka: "apache/kafka:3.7.2-crashloop" },
  },
  {
    version: "1.6.1-kafka-crashloop",
    infrastructure: { ...releaseFor("1.6.0").infrastructure, kafka: "apache/kafka:3.8.2-crashloop" },
  },
  // 1.6.0's infrastructure upgrades fine; the platform services then crash-loop.
  { version: "1.6.0-crashloop", infrastructure: releaseFor("1.6.0").infrastructure },
]);
