// Kubernetes resource quantities (1.5Gi, 500m, 1e3) as exact fractions, for the CEL quantity
// library that `onto validate` registers. Written by hand: the npm parsers either live in
// @kubernetes/client-node (which api/ may not import) or round through floating point, and CEL
// comparisons must be exact to agree with the API server.

const GRAMMAR = /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?[0-9]+))?$/;
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** A parsed quantity: the exact value numerator / denominator (denominator > 0). */
export class Quantity {
  private constructor(
    readonly numerator: bigint,
    readonly denominator: bigint,
  ) {}

  static isValid(text: string): boolean {
    return GRAMMAR.test(text);
  }

  /** Parses `text`; throws an Error naming the text when it is not a quantity. */
  static parse(text: string): Quantity {
    const match = GRAMMAR.exec(text);
    if (!match) throw new Error(`${JSON.stringify(text)} is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)`);
    const [, sign, number = "0", binary, decimal, exponent] = match;
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

  /** -1, 0 or 1 as this is less than, equal to or greater than `other`. */
  compareTo(other: Quantity): number {
    const left = this.numerator * other.denominator;
    const right = other.numerator * this.denominator;
    return left < right ? -1 : left > right ? 1 : 0;
  }
}

/**
 * Memory as the VPA recommender writes it (plain bytes, e.g. 865936536) in Mi or Gi, for people
 * (status views, Events); any other form as it is.
 */
export function readableBytes(quantity: string): string {
  if (!/^[0-9]+$/.test(quantity)) return quantity;
  const bytes = Number(quantity);
  if (bytes >= 10 * 1024 ** 3) return `${Math.round(bytes / 1024 ** 3)}Gi`;
  if (bytes >= 1024 ** 2) return `${Math.round(bytes / 1024 ** 2)}Mi`;
  return quantity;
}
