// Maintenance windows: open, closed, the next start, time zones, and malformed windows named by field.
import { describe, expect, it } from "vitest";
import { durationMs, windowState } from "./maintenance-windows.js";

const at = (iso: string) => new Date(iso);

describe("maintenance windows", () => {
  it("no window: unrestricted", () => {
    expect(windowState([], at("2026-12-01T10:00:00Z"))).toMatchObject({ unrestricted: true, open: false });
  });

  it("a Saturday 02:00 Berlin window of 4h is open at 03:00 Berlin and closed on Sunday", () => {
    const w = [{ start: "0 2 * * SAT", duration: "4h", timeZone: "Europe/Berlin" }];
    const inside = windowState(w, at("2026-12-05T02:00:00Z")); // 03:00 in Berlin (UTC+1)
    expect(inside).toMatchObject({ unrestricted: false, open: true });
    expect(inside.openUntil?.toISOString()).toBe("2026-12-05T05:00:00.000Z");
    const outside = windowState(w, at("2026-12-06T02:00:00Z"));
    expect(outside.open).toBe(false);
    expect(outside.next?.toISOString()).toBe("2026-12-12T01:00:00.000Z");
  });

  it("reads the start in its time zone", () => {
    const utc = windowState(
      [{ start: "0 2 * * *", duration: "1h", timeZone: "UTC" }],
      at("2026-07-01T02:30:00Z"),
    );
    const ny = windowState(
      [{ start: "0 2 * * *", duration: "1h", timeZone: "America/New_York" }],
      at("2026-07-01T02:30:00Z"),
    );
    expect(utc.open).toBe(true);
    expect(ny.open).toBe(false);
    expect(ny.next?.toISOString()).toBe("2026-07-01T06:00:00.000Z"); // 02:00 EDT
  });

  it("takes seconds (six fields) for short windows", () => {
    const w = [{ start: "*/20 * * * * *", duration: "5s", timeZone: "UTC" }];
    expect(windowState(w, at("2026-12-01T10:00:03Z")).open).toBe(true);
    expect(windowState(w, at("2026-12-01T10:00:07Z"))).toMatchObject({ open: false });
    expect(windowState(w, at("2026-12-01T10:00:07Z")).next?.toISOString()).toBe("2026-12-01T10:00:20.000Z");
  });

  it("names a malformed window's field, and it never opens", () => {
    const s = windowState(
      [
        { start: "every night", duration: "1h", timeZone: "UTC" },
        { start: "0 2 * * *", duration: "1h", timeZone: "Mars/Olympus" },
        { start: "0 2 * * *", duration: "9d", timeZone: "UTC" },
      ],
      at("2026-12-01T02:30:00Z"),
    );
    expect(s.open).toBe(false);
    expect(s.problems).toHaveLength(3);
    expect(s.problems[0]).toMatch(/^spec\.maintenance\.windows\[0\]\.start: /);
    expect(s.problems[1]).toMatch(/^spec\.maintenance\.windows\[1\]\.timeZone: /);
    expect(s.problems[2]).toMatch(/^spec\.maintenance\.windows\[2\]\.duration: /);
  });

  it("parses durations", () => {
    expect(durationMs("1h30m")).toBe(5_400_000);
    expect(durationMs("90s")).toBe(90_000);
    expect(durationMs("")).toBeUndefined();
    expect(durationMs("5d")).toBeUndefined();
  });
});
