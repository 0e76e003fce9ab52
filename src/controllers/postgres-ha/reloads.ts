// Which Postgres members to reload, as a pure decision. The settings of POSTGRES.reloadableSettings
// (those the spec derives from the volume's size) come from a file of the ConfigMap that
// postgresql.conf includes; the kubelet rewrites the mounted file in place, but a server takes a
// new value only when it reads its files again. A member whose files give a value it does not run
// is reloaded (ha.ts calls pg_reload_conf() through act()), at most once per interval each, so a
// value the server does not take (it would log why) costs one Event an interval, not one a pass.
// The same for the platform certificate: Postgres reads its certificate files again at a reload, so
// a member serving another certificate than the Secret holds (renewed, and the kubelet has updated
// the mounted files or soon will) is reloaded instead of restarted.
import type { MemberView } from "./decisions.js";

/** How long after reloading a member it is not reloaded again. */
export const RELOAD_INTERVAL_MS = 60_000;
/**
 * The same for a member whose only reason is the certificate: the kubelet updates the mounted
 * files up to a minute or so after the Secret changed, and a reload before that changes nothing.
 */
export const CERTIFICATE_RELOAD_INTERVAL_MS = 10_000;

export interface ReloadInput {
  members: readonly MemberView[];
  /** When each member was last reloaded (by member name). */
  lastReloadAt: ReadonlyMap<string, Date>;
  now: Date;
  intervalMs: number;
  /** The serial of the certificate in the platform's TLS Secret (upper-case hex), when it has one. */
  certificateSerial?: string | undefined;
}

/** How a certificate a member serves shows among the settings of a Reload. */
export const CERTIFICATE_SETTING = "ssl_cert_file";

/** A member to reload, and the settings whose file value it does not run yet. */
export interface Reload {
  member: string;
  settings: { name: string; running: string; file: string }[];
}

/** Bytes per memory unit and milliseconds per time unit, as postgresql.conf spells them. */
const UNITS: Record<string, number> = {
  B: 1,
  kB: 1024,
  MB: 2 ** 20,
  GB: 2 ** 30,
  TB: 2 ** 40,
  us: 0.001,
  ms: 1,
  s: 1000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** The size of a pg_settings unit ("MB", or "8kB": eight of kB). */
function unitSize(unit: string): number | undefined {
  const m = /^(\d*)([A-Za-z]+)$/.exec(unit);
  const size = m?.[2] !== undefined ? UNITS[m[2]] : undefined;
  if (!m || size === undefined) return undefined;
  return (m[1] ? Number(m[1]) : 1) * size;
}

/**
 * Whether a configuration file's value is the value a server runs. Postgres reads "5GB" and
 * "5120MB" alike, and a number without a unit in the setting's own unit; pg_settings gives the
 * number in that unit. Values without a unit are compared as text.
 */
export function sameValue(file: string, running: string, unit?: string): boolean {
  const base = unit ? unitSize(unit) : undefined;
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$/.exec(file);
  if (base === undefined || !m?.[1]) return file.trim() === running.trim();
  const factor = m[2] ? UNITS[m[2]] : base;
  if (factor === undefined) return file.trim() === running.trim();
  return Number(m[1]) * factor === Number(running) * base;
}

/** The members that run a reloadable setting other than their files give, and are due a reload. */
export function reloadsDue(input: ReloadInput): Reload[] {
  const due: Reload[] = [];
  for (const member of input.members) {
    if (member.pod !== "present" || !member.sql) continue;
    const settings = (member.sql.fileSettings ?? [])
      // A server flag outranks the file: a reload would change nothing (a member started by an
      // older entrypoint, until its pod restarts).
      .filter((s) => s.source !== "command line" && !sameValue(s.file, s.running, s.unit))
      .map((s) => ({ name: s.name, running: s.shown, file: s.file }));
    const served = member.sql.certificateSerial;
    if (served && input.certificateSerial && served !== input.certificateSerial)
      settings.push({
        name: CERTIFICATE_SETTING,
        running: `serial ${served}`,
        file: `serial ${input.certificateSerial}`,
      });
    if (settings.length === 0) continue;
    const onlyCertificate = settings.every((s) => s.name === CERTIFICATE_SETTING);
    const interval = onlyCertificate
      ? Math.min(input.intervalMs, CERTIFICATE_RELOAD_INTERVAL_MS)
      : input.intervalMs;
    const last = input.lastReloadAt.get(member.name);
    if (last && input.now.getTime() - last.getTime() < interval) continue;
    due.push({ member: member.name, settings });
  }
  return due;
}
