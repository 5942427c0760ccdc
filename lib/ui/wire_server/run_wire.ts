/**
 * `kimi --wire`: serve the wire protocol on a transport (stdio by default; one
 * {@link WireServer} per process) until the input ends or a termination signal.
 *
 * @module
 */
import type { KimiApp } from "../../app/kimi_app.ts";
import { WireServer } from "./server.ts";
import { serveOn, stdioTransport, type WireTransport } from "./transport.ts";

/** Options of {@link runWire}. */
export interface RunWireOptions {
  /** The transport (default: newline-delimited stdin/stdout). */
  transport?: WireTransport;
  /** Whether SIGTERM/SIGINT shut the server down (default true). */
  handleSignals?: boolean;
}

/** Serve the wire protocol until the input ends or a termination signal; resolves with 0. */
export async function runWire(app: KimiApp, opts: RunWireOptions = {}): Promise<number> {
  const transport = opts.transport ?? stdioTransport();
  const server = new WireServer(app, {
    write: (text) => transport.write(text),
    writePieces: transport.writePieces?.bind(transport),
  });
  server.start();
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  const signals: Deno.Signal[] = opts.handleSignals === false ? [] : ["SIGTERM", "SIGINT"];
  for (const sig of signals) {
    try {
      Deno.addSignalListener(sig, onSignal);
    } catch {
      // signal not supported on this platform
    }
  }
  const stopped = new Promise<void>((res) => stop.signal.addEventListener("abort", () => res()));
  try {
    await Promise.race([serveOn(server, transport, stop.signal), stopped]);
    stop.abort();
    await server.shutdown();
  } finally {
    for (const sig of signals) {
      try {
        Deno.removeSignalListener(sig, onSignal);
      } catch {
        // ignore
      }
    }
  }
  return 0;
}
