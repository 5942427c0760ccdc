/**
 * `kimi --wire`: serve the wire protocol on stdio (one {@link WireServer} per process) until
 * stdin closes or a termination signal.
 *
 * @module
 */
import type { KimiApp } from "../../app/kimi_app.ts";
import { log } from "../../log.ts";
import { readLines } from "../../wire/line_reader.ts";
import { WireServer } from "./server.ts";
import { type JsonPiece, recordBytes } from "../../session/json_pieces.ts";

/** Options of {@link runWire}. */
export interface RunWireOptions {
  /** Input stream (default: the process's stdin). */
  stdin?: ReadableStream<Uint8Array>;
  /** Writes one or more lines (joined by "\n", no final newline; default: stdout). */
  writeLine?: (text: string) => Promise<void>;
  /** Whether SIGTERM/SIGINT shut the server down (default true). */
  handleSignals?: boolean;
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

/** Serve the wire protocol until stdin closes or a termination signal; resolves with 0. */
export async function runWire(app: KimiApp, opts: RunWireOptions = {}): Promise<number> {
  const server = new WireServer(
    app,
    opts.writeLine ? { write: opts.writeLine } : {
      write: stdoutWrite,
      writePieces: stdoutWritePieces,
    },
  );
  server.start();
  const stop = Promise.withResolvers<void>();
  const onSignal = () => stop.resolve();
  const signals: Deno.Signal[] = opts.handleSignals === false ? [] : ["SIGTERM", "SIGINT"];
  for (const sig of signals) {
    try {
      Deno.addSignalListener(sig, onSignal);
    } catch {
      // signal not supported on this platform
    }
  }
  let stopped = false;
  const reading = (async () => {
    for await (const line of readLines(opts.stdin ?? Deno.stdin.readable)) {
      if (stopped) return;
      server.handleLine(line);
    }
  })().catch((err) => {
    log("WARNING", "wire", `stdin read failed: ${(err as Error).message}`);
  });
  try {
    await Promise.race([reading, stop.promise]);
    stopped = true;
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
