// The platform certificates' expiry as a metric, for the OntoCertificateExpiresSoon alert: one
// gauge per platform and Secret, set on every reconcile, removed when the platform no longer has
// that certificate.
import { Gauge, type Registry } from "prom-client";
import type { CertificateState } from "../../api/index.js";

const NAME = "onto_certificate_expiry_timestamp_seconds";
type Labels = "platform_namespace" | "platform" | "secret" | "issuer";

export class CertificateMetrics {
  private readonly expiry: Gauge<Labels>;
  /** Secrets exported per platform, so one that is gone is removed. */
  private readonly exported = new Map<string, Map<string, CertificateState["issuer"]>>();

  constructor(registry: Registry) {
    // Several operators may share one registry (tests start them in one process).
    this.expiry =
      (registry.getSingleMetric(NAME) as Gauge<Labels> | undefined) ??
      new Gauge({
        name: NAME,
        help: "When each platform certificate expires (Unix seconds), by platform and Secret; issuer is operator or user.",
        // Not `namespace`: Prometheus sets that label to the scraped target's namespace.
        labelNames: ["platform_namespace", "platform", "secret", "issuer"],
        registers: [registry],
      });
  }

  /** Exports `states` for the platform, replacing what was exported for it before. */
  set(namespace: string, platform: string, states: Record<string, CertificateState>): void {
    const key = `${namespace}/${platform}`;
    const before = this.exported.get(key) ?? new Map<string, CertificateState["issuer"]>();
    const now = new Map<string, CertificateState["issuer"]>();
    for (const [secret, state] of Object.entries(states)) {
      const labels = { platform_namespace: namespace, platform, secret, issuer: state.issuer };
      this.expiry.set(labels, Math.floor(new Date(state.notAfter).getTime() / 1000));
      now.set(secret, state.issuer);
    }
    for (const [secret, issuer] of before)
      if (now.get(secret) !== issuer)
        this.expiry.remove({ platform_namespace: namespace, platform, secret, issuer });
    this.exported.set(key, now);
  }
}
