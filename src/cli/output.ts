// Output helpers shared by the commands: colours only when the stream is a terminal (NO_COLOR
// turns them off, FORCE_COLOR on), and the machine formats (-o json|yaml).
import { Option } from "commander";
import pc from "picocolors";
import { stringify } from "yaml";

export type Palette = ReturnType<typeof pc.createColors>;

/** Colours for `stream`: on a terminal unless NO_COLOR is set; FORCE_COLOR forces them. */
export function paletteFor(stream: NodeJS.WriteStream = process.stdout): Palette {
  const env = process.env;
  const enabled =
    !env.NO_COLOR && (Boolean(env.FORCE_COLOR) || (stream.isTTY === true && env.TERM !== "dumb"));
  return pc.createColors(enabled);
}

/** A palette that adds nothing (tests, machine output). */
export const plain: Palette = pc.createColors(false);

export type OutputFormat = "text" | "json" | "yaml";

export function outputOption(): Option {
  return new Option("-o, --output <format>", "output format")
    .choices(["text", "json", "yaml"])
    .default("text");
}

/** `value` as JSON or YAML text, ending in a newline. */
export function structured(value: unknown, format: "json" | "yaml"): string {
  return format === "json" ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, { lineWidth: 0 });
}
