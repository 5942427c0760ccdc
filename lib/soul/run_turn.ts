/**
 * Running one turn with its wire: the per-turn channel, the recorder writing `wire.jsonl`, and
 * the UI loop reading the channel (reference §5.1 `run_soul`).
 *
 * @module
 */
import { Wire } from "../wire/channel.ts";
import type { UserInput } from "../wire/messages.ts";
import { recordWire, type WireFile } from "../wire/recorder.ts";
import type { KimiSoul } from "./soul.ts";
import type { TurnResult } from "./turn.ts";

/** Options of {@link runTurn}. */
export interface RunTurnOptions {
  /**
   * The UI loop. It is called synchronously before the soul starts, so it must subscribe to
   * the wire before its first `await`.
   */
  ui: (wire: Wire) => Promise<void>;
  /** Cancels the turn. */
  signal: AbortSignal;
  /** Where merged messages are recorded. */
  wireFile?: WireFile;
  /** Called with the wire once it exists (e.g. to forward approval requests into it). */
  onWire?: (wire: Wire) => void;
}

/** Run one turn of `soul` on `input`, streaming to the UI and recording to `wire.jsonl`. */
export async function runTurn(
  soul: KimiSoul,
  input: UserInput,
  opts: RunTurnOptions,
): Promise<TurnResult> {
  const wire = new Wire();
  const recorder = opts.wireFile
    ? recordWire(wire.subscribe({ merge: true }), opts.wireFile)
    : Promise.resolve();
  const ui = opts.ui(wire);
  opts.onWire?.(wire);
  try {
    return await soul.run(input, { wire, signal: opts.signal });
  } finally {
    wire.shutdown();
    await recorder;
    await ui;
  }
}
