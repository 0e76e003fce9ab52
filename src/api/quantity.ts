// Kubernetes resource quantities (1.5Gi, 500m, 1e3) as exact fractions, for the CEL quantity
// library that `onto validate` registers. Written by hand: the npm parsers either live in
// @kubernetes/client-node (which api/ may not import) or round through floating point, and CEL
// comparisons must be exact to agree with the API server.
//
// Exact arithmetic costs time in the size of the exponent (10^e as a BigInt), so the parser
// refuses what no real quantity needs: text longer than MAX_TEXT or a decimal exponent beyond
// ±MAX_EXPONENT. The schema bounds both more tightly; this bound holds for every caller.

const GRAMMAR = /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?[0-9]+))?$/;
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const INT64_MAX = 2n ** 63n - 1n;
/** Longest text parsed (the schema allows 32 characters). */
export const MAX_TEXT = 64;
/** Largest decimal exponent parsed, either sign (the schema allows up to 18). */
export const MAX_EXPONENT = 64;

/** A parsed quantity: the exact value numerator / denominator (denominator > 0). */
export class Quantity {
  private constructor(
    readonly numerator: bigint,
    readonly denominator: bigint,
  ) {}

  static isValid(text: string): boolean {
    const match = text.length <= MAX_TEXT ? GRAMMAR.exec(text) : null;
    return match !== null && Math.abs(Number(match[5] ?? 0)) <= MAX_EXPONENT;
  }

  /** Parses `text`; throws an Error naming the text when it is not a quantity (or out of bounds). */
  static parse(text: string): Quantity {
    if (text.length > MAX_TEXT)
      throw new Error(`a quantity has at most ${MAX_TEXT} characters, got ${text.length}`);
    const match = GRAMMAR.exec(text);
    if (!match) throw new Error(`${JSON.stringify(text)} is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)`);
    const [, sign, number = "0", binary, decimal, exponent] = match;
    if (exponent !== undefined && Math.abs(Number(exponent)) > MAX_EXPONENT)
      throw new Error(`${JSON.stringify(text)}: the exponent of a quantity is at most ${MAX_EXPONENT}`);
    const [whole = "", fraction = ""] = number.split(".");
    let numerator = BigInt((whole || "0") + fraction);
    let denominator = 10n ** BigInt(fraction.length);
    if (sign === "-") numerator = -numerator;
    if (binary) numerator *= 2n ** BigInt(BINARY[binary] ?? 0);
    const power = decimal ? (DECIMAL[decimal] ?? 0) : exponent ? Number(exponent) : 0;
    if (power >= 0) numerator *= 10n ** BigInt(power);
    else denominator *= 10n ** BigInt(-power);
    return new Quantity(numerator, denominator);
  }

  /** This quantity times `factor` (e.g. 1.5 for OOM healing), exact to six decimals of the factor. */
  times(factor: number): Quantity {
    if (!Number.isFinite(factor) || factor < 0) throw new Error(`cannot scale a quantity by ${factor}`);
    const millionths = BigInt(Math.round(factor * 1_000_000));
    return new Quantity(this.numerator * millionths, this.denominator * 1_000_000n);
  }

  /** The value as a JavaScript number (approximate for very large or fractional values). */
  toNumber(): number {
    return Number(this.numerator) / Number(this.denominator);
  }

  /**
   * A memory-style rendering: whole mebibytes, rounded up, written with the largest binary
   * suffix that divides evenly (1536Mi, 2Gi). Meant for memory limits and requests.
   */
  toBinaryString(): string {
    const mebi = 1n << 20n;
    const scaled = this.denominator * mebi;
    let mebibytes = (this.numerator + scaled - 1n) / scaled;
    if (mebibytes < 0n) mebibytes = 0n;
    let suffix = 0;
    const suffixes = ["Mi", "Gi", "Ti", "Pi", "Ei"];
    while (suffix < suffixes.length - 1 && mebibytes > 0n && mebibytes % 1024n === 0n) {
      mebibytes /= 1024n;
      suffix++;
    }
    return `${mebibytes}${suffixes[suffix]}`;
  }

  /** CEL's Quantity.isInteger: a whole number that an int64 holds (as the API server's AsInt64). */
  isInteger(): boolean {
    if (this.numerator % this.denominator !== 0n) return false;
    const value = this.numerator / this.denominator;
    return value <= INT64_MAX && value >= -INT64_MAX - 1n;
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other`. */
  compareTo(other: Quantity): number {
    const left = this.numerator * other.denominator;
    const right = other.numerator * this.denominator;
    return left < right ? -1 : left > right ? 1 : 0;
  }
}
