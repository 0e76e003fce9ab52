// The write gate asked once more at the socket. fetch does many asynchronous steps between the call
// and the moment undici writes the request to a connection (and may open the connection first); a
// process frozen in between (SIGSTOP, a stalled event loop) would, once thawed, send a write the
// gate allowed seconds earlier, when its lease was still valid. This interceptor asks the gate in
// onRequestStart, which undici calls synchronously right before it writes the request line, and
// hands undici the body as bytes so that headers and body go to the socket in that same
// synchronous step (fetch's own body is a stream, written chunk by chunk on later ticks). What
// reaches the kernel before a freeze reaches the server before the lease can pass on; what was not
// written yet is refused on the first tick after the thaw, as the gate then sees the lapsed lease.
// No library offers a check at that point; undici's interceptor API is the hook it provides.
import type { Dispatcher } from "undici";

/** Why the write must not go now, or undefined: it may. */
export type FenceCheck = () => string | undefined;

/**
 * `dispatcher`, except that a request it sends is first checked with `check` at the socket;
 * a refusal aborts it before a byte is written and is passed to `onRefused`. `body` is the
 * request's exact body (the same bytes fetch was given), sent in one write with the headers.
 */
export function fencedDispatcher(
  dispatcher: Dispatcher,
  check: FenceCheck,
  body: string | undefined,
  onRefused: (reason: string) => void,
): Dispatcher {
  const bytes = body === undefined ? undefined : Buffer.from(body);
  return dispatcher.compose(
    (dispatch) => (opts, handler) =>
      dispatch(bytes === undefined ? opts : { ...opts, body: bytes }, fenced(handler, check, onRefused)),
  );
}

function fenced(
  handler: Dispatcher.DispatchHandler,
  check: FenceCheck,
  onRefused: (reason: string) => void,
): Dispatcher.DispatchHandler {
  return {
    onRequestStart(controller, context) {
      const refused = check();
      if (refused !== undefined) {
        onRefused(refused);
        controller.abort(new Error(`write refused at the socket: ${refused}`));
        return;
      }
      handler.onRequestStart?.(controller, context);
    },
    onRequestUpgrade: (controller, statusCode, headers, socket) =>
      handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
    onResponseStart: (controller, statusCode, headers, statusMessage) =>
      handler.onResponseStart?.(controller, statusCode, headers, statusMessage),
    onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
    onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
    onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
  };
}
