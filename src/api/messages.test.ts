import { describe, expect, it } from "vitest";
import { MAX_MESSAGE, boundedList, boundedText } from "./messages.js";

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");

describe("status message bounds", () => {
  it("keeps a list that fits as it is", () => {
    expect(boundedList(["a", "b"])).toBe("a; b");
  });

  it("joins 300 apply errors within the bound, whole items first, then how many were left out", () => {
    const errors = Array.from(
      { length: 300 },
      (_, i) =>
        `Deployment/component-${i}: admission webhook "policy.example.com" denied the request: ${"x".repeat(120)}`,
    );
    const message = boundedList(errors);
    expect(bytes(errors.join("; "))).toBeGreaterThan(MAX_MESSAGE);
    expect(bytes(message)).toBeLessThanOrEqual(MAX_MESSAGE);
    expect(message.startsWith(errors[0]!)).toBe(true);
    const shown = message.split("; ").filter((part) => part.startsWith("Deployment/")).length;
    expect(message.endsWith(`(and ${300 - shown} more)`)).toBe(true);
    expect(shown).toBeGreaterThan(10);
  });

  it("cuts a single item longer than the bound, so the first error is always shown", () => {
    const message = boundedList(["é".repeat(5000), "second"]);
    expect(bytes(message)).toBeLessThanOrEqual(MAX_MESSAGE);
    expect(message.startsWith("éé")).toBe(true);
    expect(message.endsWith("(and 1 more)")).toBe(true);
  });

  it("cuts a text at a character boundary, counting UTF-8 bytes", () => {
    const text = "日本".repeat(2000);
    const cut = boundedText(text, 100);
    expect(bytes(cut)).toBeLessThanOrEqual(100);
    expect(cut.endsWith("…")).toBe(true);
    expect(cut).not.toContain("\uFFFD");
    expect(text.startsWith(cut.slice(0, -1))).toBe(true);
  });
});
