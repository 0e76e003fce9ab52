import { describe, expect, it } from "vitest";
import { resourcePath } from "./env.js";

describe("resourcePath", () => {
  it("leaves out the namespace and the object's name, keeping the kind and the subresource", () => {
    expect(resourcePath("/api/v1/namespaces/a/services/b")).toBe("/api/v1/namespaces/-/services/-");
    expect(resourcePath("/apis/onto.paas/v1alpha1/namespaces/n/ontoplatforms/p/status")).toBe(
      "/apis/onto.paas/v1alpha1/namespaces/-/ontoplatforms/-/status",
    );
    expect(resourcePath("/api/v1/namespaces/x/events")).toBe("/api/v1/namespaces/-/events");
    expect(resourcePath("/apis/apps/v1/deployments")).toBe("/apis/apps/v1/deployments");
    expect(resourcePath("/api/v1/nodes/n1")).toBe("/api/v1/nodes/-");
    expect(resourcePath("/api/v1/namespaces/x")).toBe("/api/v1/namespaces/-");
  });
});
