// How long a message the operator writes into a status may be, and how a list of problems is put
// into one: every condition, component and upgrade message of both resources is at most
// MAX_MESSAGE characters in the schema, so a status that joined a few hundred apply errors would
// be refused by the API server as a whole (and the platform would show no status at all). A list
// is joined as far as it fits and ends saying how many items were left out; a single text is cut.
// Bytes are counted (UTF-8), which bounds the characters the schema counts as well.

/** The schema's bound on a status message (condition, component state, upgrade history). */
export const MAX_MESSAGE = 4096;

const ELLIPSIS = "…";

/** `text`, cut to at most `maxBytes` UTF-8 bytes (ending in "…" when cut), never inside a character. */
export function boundedText(text: string, maxBytes = MAX_MESSAGE): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(ELLIPSIS, "utf8");
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, "utf8");
    if (bytes + size > room) break;
    bytes += size;
    end += ch.length;
  }
  return text.slice(0, end) + ELLIPSIS;
}

/**
 * `items` joined with `separator` within `maxBytes`: as many whole items as fit, then
 * "(and N more)"; an item longer than its share is cut, so the first one is always shown.
 */
export function boundedList(items: readonly string[], maxBytes = MAX_MESSAGE, separator = "; "): string {
  const joined = items.join(separator);
  if (Buffer.byteLength(joined, "utf8") <= maxBytes) return joined;
  // Room for the longest tail this can need ("; (and 99999 more)").
  const tail = (left: number): string => `${separator}(and ${left} more)`;
  const room = maxBytes - Buffer.byteLength(tail(items.length), "utf8");
  const taken: string[] = [];
  let used = 0;
  for (const item of items) {
    const extra =
      (taken.length > 0 ? Buffer.byteLength(separator, "utf8") : 0) + Buffer.byteLength(item, "utf8");
    if (used + extra > room) {
      if (taken.length === 0) taken.push(boundedText(item, room));
      break;
    }
    taken.push(item);
    used += extra;
  }
  return taken.join(separator) + tail(items.length - taken.length);
}
