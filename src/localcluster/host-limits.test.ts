import { describe, expect, it } from "vitest";
import { kubeletHostProblem } from "./host-limits.js";

// The kubelet's own lines, as a real node logged them with the machine's inotify instances used up.
const EXHAUSTED = [
  "I1201 16:20:16.106080    3726 factory.go:220] Registration of the crio container factory failed: dial unix /var/run/crio/crio.sock: connect: no such file or directory",
  "E1201 16:20:16.106184    3726 manager.go:326] Registration of the raw container factory failed: inotify_init: too many open files",
  'E1201 16:20:16.106235    3726 kubelet.go:1804] "Failed to start cAdvisor" err="inotify_init: too many open files"',
].join("\n");

describe("kubeletHostProblem", () => {
  it("names the exhausted inotify limit and what to do", () => {
    const problem = kubeletHostProblem("real-1", EXHAUSTED, "128");
    expect(problem).toContain("the kubelet of real-1 cannot start cAdvisor");
    expect(problem).toContain("fs.inotify.max_user_instances = 128");
    expect(problem).toContain("sysctl -w fs.inotify.max_user_instances=512");
  });

  it("says nothing for a kubelet that started cAdvisor", () => {
    const fine = EXHAUSTED.split("\n").slice(0, 1).join("\n");
    expect(kubeletHostProblem("real-1", fine, "128")).toBeUndefined();
  });
});
