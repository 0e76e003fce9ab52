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
    /** The text it was parsed from (CEL's isInteger depends on how it was written). */
    private readonly text?: string,
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
    return new Quantity(numerator, denominator, text);
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

  /**
   * CEL's Quantity.isInteger, as the API server computes it: Quantity.AsInt64, which succeeds
   * only for a value parsed into its int64 form (not its arbitrary-precision one) at a scale of
   * zero or more. So it depends on how the value is written, not only on the value: "1.0", "1000m"
   * and "94531Ti" are whole numbers, yet not integers to CEL. Mirrors apimachinery's ParseQuantity.
   */
  isInteger(): boolean {
    if (this.text === undefined) return false;
    return celInteger(this.text);
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

const SUFFIXES: Record<string, { binary: boolean; exponent: number }> = {
  "": { binary: false, exponent: 0 },
  ...Object.fromEntries(Object.entries(DECIMAL).map(([k, e]) => [k, { binary: false, exponent: e }])),
  ...Object.fromEntries(Object.entries(BINARY).map(([k, e]) => [k, { binary: true, exponent: e }])),
};

const fitsInt64 = (n: bigint): boolean => n <= INT64_MAX && n >= -INT64_MAX - 1n;

/** apimachinery's ParseQuantity fast path, then int64Amount.AsInt64 (see isInteger). */
function celInteger(text: string): boolean {
  if (text === "0") return true;
  let rest = text;
  if (rest.startsWith("-") || rest.startsWith("+")) rest = rest.slice(1);
  const match = /^0*([0-9]*)(?:[.]([0-9]*))?(.*)$/.exec(rest);
  if (!match) return false;
  const num = match[1] || "0";
  const denom = match[2] ?? "";
  const suffix = match[3] ?? "";
  const exponentForm = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
  const known = exponentForm ? { binary: false, exponent: Number(exponentForm[1]) } : SUFFIXES[suffix];
  if (!known) return false;
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (!known.binary) {
    scale = known.exponent;
    precision = 18 - (num.length + denom.length);
  } else if (known.exponent >= 0 && denom.length === 0) {
    mantissa = 1n << BigInt(known.exponent);
    precision = 15 - num.length - Math.trunc((known.exponent * 3) / 10) - 1;
  } else {
    precision = -1;
  }
  if (precision < 0) return false; // arbitrary precision: AsInt64 fails
  scale -= denom.length;
  if (scale < -9) return false;
  const value = BigInt(num + denom) * mantissa;
  if (!fitsInt64(value)) return false;
  if (scale < 0) return false;
  return fitsInt64(value * 10n ** BigInt(scale));
}
