// A CEL environment with the parts of the Kubernetes CEL libraries our x-kubernetes-validations
// rules call, so that `onto validate` evaluates the very rule strings of the CRD. cel-js brings
// standard CEL (macros such as all/exists_one, string.matches, has()); the Kubernetes quantity
// library is not standard CEL and is registered here with the API server's semantics:
//   isQuantity(string) bool, quantity(string) Quantity, Quantity.compareTo(Quantity) int,
//   Quantity.isInteger() bool.
// A rule that calls anything else fails the unit test that compiles every rule of the schema.
import { Environment } from "@marcbachmann/cel-js";
import { Quantity } from "./quantity.js";

export function kubernetesCelEnvironment(): Environment {
  return new Environment({ unlistedVariablesAreDyn: true })
    .registerType("Quantity", Quantity)
    .registerFunction("isQuantity(string): bool", (text: string) => Quantity.isValid(text))
    .registerFunction("quantity(string): Quantity", (text: string) => Quantity.parse(text))
    .registerFunction("Quantity.compareTo(Quantity): int", (a: Quantity, b: Quantity) =>
      BigInt(a.compareTo(b)),
    )
    .registerFunction("Quantity.isInteger(): bool", (a: Quantity) => a.isInteger());
}
