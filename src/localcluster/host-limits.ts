// Host limits a real node's kubelet can run into, said in words a user can act on. Every kubelet,
// API server, controller-manager, scheduler and containerd on a machine holds inotify instances
// (five or six each), all under one per-user limit (fs.inotify.max_user_instances, 128 by default
// on Debian). With several local clusters up the limit is used up, and a new kubelet cannot start
// cAdvisor: it logs "inotify_init: too many open files" and its node never becomes Ready.
import { readFileSync } from "node:fs";

const INOTIFY_LIMIT_FILE = "/proc/sys/fs/inotify/max_user_instances";
const CADVISOR_INOTIFY = /Failed to start cAdvisor.*inotify_init: too many open files/;

/** The problem a kubelet's log shows that waiting will not cure, or undefined. */
export function kubeletHostProblem(
  node: string,
  log: string,
  inotifyLimit: string | undefined,
): string | undefined {
  if (!CADVISOR_INOTIFY.test(log)) return undefined;
  return (
    `the kubelet of ${node} cannot start cAdvisor ("inotify_init: too many open files"): the machine's ` +
    `inotify instances (fs.inotify.max_user_instances = ${inotifyLimit ?? "?"}) are used up by the ` +
    "clusters already running on it; stop one (`onto cluster down`) or raise the limit " +
    "(`sysctl -w fs.inotify.max_user_instances=512`)"
  );
}

/** The machine's fs.inotify.max_user_instances, or undefined where it cannot be read. */
export function inotifyInstanceLimit(): string | undefined {
  try {
    return readFileSync(INOTIFY_LIMIT_FILE, "utf8").trim();
  } catch {
    return undefined;
  }
}
