/**
 * Where a {@link WireServer} reads its JSON-RPC lines and writes its replies: the transport.
 * `kimi --wire` uses {@link stdioTransport} (newline-delimited stdin/stdout); `kimi web` feeds
 * the same server from WebSockets (`lib/ui/web/server/session_host.ts`).
 *
 * @module
 */
import { log } from "../../log.ts";
import { readLines } from "../../wire/line_reader.ts";
import type { WireServer } from "./server.ts";

/** One connection's line stream in both directions. */
export interface WireTransport {
  /** The inbound lines, in order (`null`: a line over the size limit); ends at end of input. */
  lines(): AsyncIterable<string | null>;
  /** Write one or more serialized lines (joined by "\n", no final newline). */
  write(text: string): Promise<void>;
}

/** Options of {@link stdioTransport}. */
export interface StdioTransportOptions {
  /** Input stream (default: the process's stdin). */
  stdin?: ReadableStream<Uint8Array>;
  /** Writes one or more lines (default: stdout, a newline appended). */
  writeLine?: (text: string) => Promise<void>;
}

const encoder = new TextEncoder();

async function stdoutWrite(text: string): Promise<void> {
  const data = encoder.encode(text + "\n");
  let off = 0;
  while (off < data.length) off += await Deno.stdout.write(data.subarray(off));
}

/** The transport of `kimi --wire`: newline-delimited JSON on stdin and stdout. */
export function stdioTransport(opts: StdioTransportOptions = {}): WireTransport {
  return {
    lines: () => readLines(opts.stdin ?? Deno.stdin.readable),
    write: opts.writeLine ?? stdoutWrite,
  };
}

/**
 * Feed every inbound line of `transport` to `server` until the input ends, `signal` aborts or
 * reading fails (logged). Does not shut the server down.
 */
export async function pumpLines(
  server: WireServer,
  transport: Pick<WireTransport, "lines">,
  signal?: AbortSignal,
): Promise<void> {
  try {
    for await (const line of transport.lines()) {
      if (signal?.aborted) return;
      server.handleLine(line);
    }
  } catch (err) {
    log("WARNING", "wire", `input read failed: ${(err as Error).message}`);
  }
}
