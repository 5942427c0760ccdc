/**
 * `replay`: the session's recorded wire messages sent again to a client (events as `event`
 * notifications, requests as `request`s, filtered for the client's protocol version), with
 * legacy record names normalised. The file is streamed from disk a record at a time and sent
 * with backpressure, so a 1 GB `wire.jsonl` replays in bounded memory.
 *
 * @module
 */
import { eventMessage, type OutboundMessage, requestMessage } from "../../wire/jsonrpc.ts";
import { type Envelope, fromEnvelope, toEnvelope } from "../../wire/messages.ts";
import type { WireFile } from "../../wire/recorder.ts";
import { type ClientProfile, filterForClient } from "../../wire/version_filter.ts";

/** Options of {@link replayRecords}. */
export interface ReplayOptions {
  /** Who receives the replay (its protocol version filters messages). */
  client: ClientProfile;
  /** Queue one outbound message. */
  send(msg: OutboundMessage): void;
  /** Wait until queued output is written (called every 64 records). */
  flush(): Promise<void>;
  /**
   * While the output backlog is too long (a big record counts as a full one), a promise that
   * resolves when the current write ends; else null. Checked after every record, so a replay
   * never holds more than a bounded backlog whatever the records' sizes.
   */
  lagging?(): Promise<void> | null;
  /** Stops the replay between records. */
  signal: AbortSignal;
  /** Replay only records written before this time (Unix seconds; default: all). */
  before?: number;
}

/** Send every record of `wireFile`; resolves with how many events and requests were sent. */
export async function replayRecords(
  wireFile: WireFile,
  opts: ReplayOptions,
): Promise<{ events: number; requests: number }> {
  let events = 0;
  let requests = 0;
  let n = 0;
  // Strict: a session record that cannot be read at all is a clean error, not an endless wait.
  for await (const rec of wireFile.records({ strict: true })) {
    if (opts.signal.aborted) break;
    if (opts.before !== undefined && rec.timestamp >= opts.before) break;
    const env = normalizeRecord(rec.message);
    if (env.kind === "request") {
      const payload = env.envelope.payload;
      const out = filterForClient(opts.client, env.envelope);
      if (out) {
        opts.send(requestMessage(String(payload.id ?? ""), out.type, out.payload));
        requests++;
      }
    } else {
      const out = filterForClient(opts.client, env.envelope);
      if (out) {
        opts.send(eventMessage(out.type, out.payload));
        events++;
      }
    }
    if (++n % 64 === 0) await opts.flush();
    else {
      const lag = opts.lagging?.();
      if (lag) await lag;
    }
  }
  return { events, requests };
}

/** Normalise a recorded envelope (legacy names and fields) and say whether it is a request. */
function normalizeRecord(env: Envelope): { kind: "event" | "request"; envelope: Envelope } {
  try {
    const parsed = fromEnvelope(env);
    if (parsed.kind === "event") return { kind: "event", envelope: toEnvelope(parsed.event) };
    if (parsed.kind === "request") {
      return {
        kind: "request",
        envelope: { type: parsed.type, payload: parsed.payload as Record<string, unknown> },
      };
    }
  } catch {
    // keep the record as written
  }
  return { kind: "event", envelope: env };
}
