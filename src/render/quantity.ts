// Kubernetes resource quantities ("500m", "4Gi", "1.5", "1e3") as numbers, so render can compare
// a request with a limit. Written here because render may not import the API client (which has
// a parser) and the grammar is small: a decimal number and one suffix or exponent.
const SUFFIX: Readonly<Record<string, number>> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

export function parseQuantity(text: string, field: string): number {
  const match = /^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][0-9]+)?$/.exec(
    text.trim(),
  );
  if (!match) throw new Error(`${field}: "${text}" is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)`);
  const suffix = match[2] ?? "";
  const factor = /^[eE][0-9]+$/.test(suffix) ? 10 ** Number(suffix.slice(1)) : (SUFFIX[suffix] ?? 1);
  return Number(match[1]) * factor;
}
