/**
 * Where a {@link WireServer} gets its JSON-RPC lines and writes its replies: the transport.
 * `kimi --wire` uses {@link stdioTransport} (newline-delimited stdin/stdout); `kimi web` runs
 * the same server on the WebSockets of a session (`lib/ui/web/server/sockets_transport.ts`).
 *
 * @module
 */
import { log } from "../../log.ts";
import { readLines } from "../../wire/line_reader.ts";
import { type JsonPiece, recordBytes } from "../../session/json_pieces.ts";
import type { WireServer } from "./server.ts";

/** One connection's line stream in both directions. */
export interface WireTransport {
  /**
   * Hand every inbound line to `deliver`, in order (`null`: a line over the size limit), until
   * the input ends or `signal` aborts; resolves then.
   */
  receive(deliver: (line: string | null) => void, signal: AbortSignal): Promise<void>;
  /** Write one or more serialized lines (joined by "\n", no final newline). */
  write(text: string): Promise<void>;
  /**
   * Write one message given as JSON pieces (a huge string kept in slices, see
   * `lib/session/json_pieces.ts`) followed by a newline; without it such a message is joined
   * into one line and goes through {@link write}.
   */
  writePieces?(pieces: readonly JsonPiece[]): Promise<void>;
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
  await writeAll(encoder.encode(text + "\n"));
}

/** A message with a huge string, encoded and written a megabyte at a time. */
async function stdoutWritePieces(pieces: readonly JsonPiece[]): Promise<void> {
  for (const chunk of recordBytes([pieces])) await writeAll(chunk);
}

async function writeAll(data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await Deno.stdout.write(data.subarray(off));
}

/** The transport of `kimi --wire`: newline-delimited JSON on stdin and stdout. */
export function stdioTransport(opts: StdioTransportOptions = {}): WireTransport {
  return {
    receive: async (deliver, signal) => {
      try {
        for await (const line of readLines(opts.stdin ?? Deno.stdin.readable)) {
          if (signal.aborted) return;
          deliver(line);
        }
      } catch (err) {
        log("WARNING", "wire", `input read failed: ${(err as Error).message}`);
      }
    },
    ...(opts.writeLine
      ? { write: opts.writeLine }
      : { write: stdoutWrite, writePieces: stdoutWritePieces }),
  };
}

/**
 * Serve `server` on `transport` until the input ends or `signal` aborts: every inbound line
 * goes to the server. Does not shut the server down.
 */
export function serveOn(
  server: WireServer,
  transport: Pick<WireTransport, "receive">,
  signal: AbortSignal,
): Promise<void> {
  return transport.receive((line) => server.handleLine(line), signal);
}
