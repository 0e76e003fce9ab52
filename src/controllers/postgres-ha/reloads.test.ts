import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FileSetting, MemberView } from "./decisions.js";
import {
  CERTIFICATE_RELOAD_INTERVAL_MS,
  CERTIFICATE_SETTING,
  RELOAD_INTERVAL_MS,
  reloadsDue,
  sameValue,
} from "./reloads.js";

const NOW = new Date("2026-12-01T12:00:00Z");

/** max_slot_wal_keep_size as a member answers it: its file gives `file`, it runs `running` MB. */
function slotSetting(file: string, running: number, source = "configuration file"): FileSetting {
  return {
    name: "max_slot_wal_keep_size",
    file,
    running: String(running),
    unit: "MB",
    source,
    shown: `${running}MB`,
  };
}

function member(
  name: string,
  settings: FileSetting[] | undefined,
  pod: MemberView["pod"] = "present",
): MemberView {
  return {
    name,
    pod,
    nodeReady: true,
    sql: { inRecovery: name !== "postgres-0", streaming: true, timeline: 1, fileSettings: settings },
  };
}

const due = (members: MemberView[], lastReloadAt = new Map<string, Date>()) =>
  reloadsDue({ members, lastReloadAt, now: NOW, intervalMs: RELOAD_INTERVAL_MS });

describe("sameValue: a file's value against the value the server runs", () => {
  it("reads units as Postgres does", () => {
    expect(sameValue("5120MB", "5120", "MB")).toBe(true);
    expect(sameValue("5GB", "5120", "MB")).toBe(true);
    expect(sameValue("5120", "5120", "MB")).toBe(true); // no unit: the setting's own
    expect(sameValue("6GB", "5120", "MB")).toBe(false);
    expect(sameValue("-1", "-1", "MB")).toBe(true); // no limit
    expect(sameValue("1MB", "128", "8kB")).toBe(true);
    expect(sameValue("1min", "60", "s")).toBe(true);
    expect(sameValue("on", "on", undefined)).toBe(true);
    expect(sameValue("on", "off", undefined)).toBe(false);
  });

  it("holds for every size the render writes (whole MB) and its GB spelling", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 30 }), (mb) => {
        expect(sameValue(`${mb}MB`, String(mb), "MB")).toBe(true);
        expect(sameValue(`${mb}MB`, String(mb + 1), "MB")).toBe(false);
        if (mb % 1024 === 0) expect(sameValue(`${mb / 1024}GB`, String(mb), "MB")).toBe(true);
      }),
    );
  });
});

describe("reloadsDue", () => {
  it("reloads each member whose files give a value it does not run, naming the setting", () => {
    const members = [
      member("postgres-0", [slotSetting("6400MB", 5120)]),
      member("postgres-1", [slotSetting("6400MB", 6400)]), // already took it
      member("postgres-2", [slotSetting("6400MB", 5120)]),
    ];
    expect(due(members)).toEqual([
      {
        member: "postgres-0",
        settings: [{ name: "max_slot_wal_keep_size", running: "5120MB", file: "6400MB" }],
      },
      {
        member: "postgres-2",
        settings: [{ name: "max_slot_wal_keep_size", running: "5120MB", file: "6400MB" }],
      },
    ]);
  });

  it("reloads a member at most once per interval", () => {
    const members = [member("postgres-0", [slotSetting("6400MB", 5120)])];
    const just = new Map([["postgres-0", new Date(NOW.getTime() - RELOAD_INTERVAL_MS + 1)]]);
    expect(due(members, just)).toEqual([]);
    const earlier = new Map([["postgres-0", new Date(NOW.getTime() - RELOAD_INTERVAL_MS)]]);
    expect(due(members, earlier).map((r) => r.member)).toEqual(["postgres-0"]);
  });

  it("leaves alone a member whose value a server flag sets, one not answering or not read, and a pod going away", () => {
    expect(
      due([
        member("postgres-0", [slotSetting("6400MB", 5120, "command line")]),
        member("postgres-1", undefined),
        member("postgres-2", [slotSetting("6400MB", 5120)], "terminating"),
        { name: "postgres-3", pod: "present", nodeReady: true },
      ]),
    ).toEqual([]);
  });

  it("never reloads a member whose files and server agree, whatever the spelling", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 20 }), fc.boolean(), (gb, spelledInGb) => {
        const file = spelledInGb ? `${gb}GB` : `${gb * 1024}MB`;
        expect(due([member("postgres-0", [slotSetting(file, gb * 1024)])])).toEqual([]);
      }),
    );
  });

  it("reloads a member serving another certificate than the Secret holds, and only that one", () => {
    const serving = (name: string, serial: string | undefined): MemberView => {
      const m = member(name, [slotSetting("6400MB", 6400)]);
      return { ...m, sql: { ...m.sql!, certificateSerial: serial } };
    };
    const members = [
      serving("postgres-0", "0A"),
      serving("postgres-1", "0B"), // already serves the new one
      serving("postgres-2", undefined), // plaintext: started without ssl, a reload cannot add it
    ];
    const reloads = reloadsDue({
      members,
      lastReloadAt: new Map(),
      now: NOW,
      intervalMs: RELOAD_INTERVAL_MS,
      certificateSerial: "0B",
    });
    expect(reloads).toEqual([
      {
        member: "postgres-0",
        settings: [{ name: CERTIFICATE_SETTING, running: "serial 0A", file: "serial 0B" }],
      },
    ]);
    // Without a Secret to compare with, nothing to do.
    expect(due(members)).toEqual([]);
    // Until the kubelet updates the files a reload changes nothing: tried again sooner than settings.
    const at = (ms: number) => new Map([["postgres-0", new Date(NOW.getTime() - ms)]]);
    const again = (ms: number) =>
      reloadsDue({
        members,
        lastReloadAt: at(ms),
        now: NOW,
        intervalMs: RELOAD_INTERVAL_MS,
        certificateSerial: "0B",
      });
    expect(again(CERTIFICATE_RELOAD_INTERVAL_MS - 1)).toEqual([]);
    expect(again(CERTIFICATE_RELOAD_INTERVAL_MS).map((r) => r.member)).toEqual(["postgres-0"]);
  });
});
