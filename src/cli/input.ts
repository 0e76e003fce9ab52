// Reading the file a command is given (-f FILE, or '-' for stdin) within INPUT_LIMITS.maxBytes:
// a file above the bound is refused by its size before a byte is parsed, and stdin is read only
// up to the bound, so a 50 MB document costs nothing instead of gigabytes of parse tree.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { INPUT_LIMITS } from "../api/index.js";

/** The file cannot be read (missing, unreadable): the command cannot run (exit 2). */
export class InputError extends Error {}
/** The file is larger than onto reads: a problem of the input, like an invalid document (exit 1). */
export class InputTooLargeError extends InputError {}

export function readManifest(file: string, maxBytes: number = INPUT_LIMITS.maxBytes): string {
  const name = file === "-" ? "stdin" : file;
  let fd: number;
  try {
    fd = file === "-" ? 0 : openSync(file, "r");
  } catch (err) {
    throw new InputError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size > maxBytes) throw tooLarge(name, stat.size, maxBytes);
    // Read at most one byte past the bound: enough to know a pipe is too large.
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, stat.isFile() ? stat.size + 1 : maxBytes + 1));
    let length = 0;
    for (;;) {
      let read: number;
      try {
        read = readSync(fd, buffer, length, buffer.length - length, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") continue;
        throw err;
      }
      if (read === 0) break;
      length += read;
      if (length > maxBytes) throw tooLarge(name, length, maxBytes, true);
      if (length === buffer.length) break;
    }
    return buffer.subarray(0, length).toString("utf8");
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

function tooLarge(name: string, size: number, maxBytes: number, atLeast = false): InputTooLargeError {
  return new InputTooLargeError(
    `${name}: ${atLeast ? "more than " : ""}${atLeast ? maxBytes : size} bytes; onto reads files of at most ${maxBytes} bytes (${maxBytes / 1024 / 1024} MiB)`,
  );
}
