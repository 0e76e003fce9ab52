import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Quantity, readableBytes } from "./quantity.js";

const q = (text: string) => Quantity.parse(text);

describe("Quantity", () => {
  it("orders the suffixes as Kubernetes does", () => {
    expect(q("1Gi").compareTo(q("1024Mi"))).toBe(0);
    expect(q("1G").compareTo(q("1Gi"))).toBe(-1);
    expect(q("500m").compareTo(q("0.5"))).toBe(0);
    expect(q("1e3").compareTo(q("1k"))).toBe(0);
    expect(q("1.5Gi").compareTo(q("1536Mi"))).toBe(0);
    expect(q("100n").compareTo(q("0.1u"))).toBe(0);
    expect(q("-1").compareTo(q("0"))).toBe(-1);
    expect(q("64Ti").compareTo(q("65Ti"))).toBe(-1);
  });

  it("scales and renders memory for OOM healing", () => {
    expect(q("4Gi").times(1.5).toBinaryString()).toBe("6Gi");
    expect(q("1Gi").times(1.5).toBinaryString()).toBe("1536Mi");
    expect(q("100M").toBinaryString()).toBe("96Mi"); // 95.37Mi rounded up
    expect(q("512Mi").times(1.5).compareTo(q("768Mi"))).toBe(0);
    expect(q("500m").toNumber()).toBe(0.5);
    expect(q("2048Gi").toBinaryString()).toBe("2Ti");
  });

  it("refuses what is not a quantity, naming it", () => {
    for (const bad of ["", "Gi", "1GB", "1.2.3", "1 Gi", "0x10"]) {
      expect(Quantity.isValid(bad), bad).toBe(false);
      expect(() => q(bad)).toThrow(JSON.stringify(bad));
    }
  });

  it("compares integers of any suffix exactly like BigInt arithmetic", () => {
    const suffixes: [string, bigint][] = [
      ["", 1n],
      ["k", 1000n],
      ["Ki", 1024n],
      ["M", 1_000_000n],
      ["Mi", 1_048_576n],
      ["Gi", 1_073_741_824n],
    ];
    const quantityArb = fc.tuple(fc.nat(1_000_000), fc.constantFrom(...suffixes));
    fc.assert(
      fc.property(quantityArb, quantityArb, ([a, [sa, fa]], [b, [sb, fb]]) => {
        const expected = BigInt(a) * fa < BigInt(b) * fb ? -1 : BigInt(a) * fa > BigInt(b) * fb ? 1 : 0;
        expect(q(`${a}${sa}`).compareTo(q(`${b}${sb}`))).toBe(expected);
      }),
    );
  });
});

describe("readableBytes", () => {
  it("shows the recommender's plain bytes in Mi or Gi and leaves other forms alone", () => {
    expect(readableBytes("865936536")).toBe("826Mi");
    expect(readableBytes(String(12 * 1024 ** 3))).toBe("12Gi");
    expect(readableBytes("1000")).toBe("1000");
    expect(readableBytes("256Mi")).toBe("256Mi");
  });
});
