// Structured JSON logging (pino). One logger per process; components take a child with their name.
import { pino, type Logger } from "pino";

export type { Logger };

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** A file the lines are appended to instead of stdout. */
  destination?: string;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      name: opts.name ?? "onto-operator",
      level: opts.level ?? process.env.LOG_LEVEL ?? "info",
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination ? pino.destination({ dest: opts.destination, append: true, sync: true }) : undefined,
  );
}

/** A logger that writes nothing: the default where the caller passes none. */
export const silentLogger: Logger = pino({ level: "silent" });

/** An error as log fields: message and name only, never the objects it may carry. */
export function errorFields(err: unknown): { error: string; errorType?: string } {
  if (err instanceof Error) return { error: err.message, errorType: err.name };
  return { error: String(err) };
}
