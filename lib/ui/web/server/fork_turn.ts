/**
 * Forking a session after a given turn (`POST /api/sessions/{id}/fork`): a copy of the session
 * (see `forkSession`) whose `wire.jsonl` and `context.jsonl` end with that turn.
 *
 * @module
 */
import { atomicWriteText } from "../../../fs/atomic_write.ts";
import { forkSession } from "../../../session/fork.ts";
import type { Session } from "../../../session/session.ts";
import { turnCheckpoints } from "../../../soul/commands/undo.ts";

/** A fork that cannot be made (the message is the API's `detail`). */
export class ForkError extends Error {}

function isTurnBegin(line: string): boolean {
  if (!line.includes("TurnBegin")) return false;
  try {
    return JSON.parse(line)?.message?.type === "TurnBegin";
  } catch {
    return false;
  }
}

/** Index of the `_checkpoint` record line with this id in context lines, or -1. */
function checkpointLine(lines: string[], id: number): number {
  return lines.findIndex((l) => {
    if (!l.includes("_checkpoint")) return false;
    try {
      const r = JSON.parse(l);
      return r?.role === "_checkpoint" && r.id === id;
    } catch {
      return false;
    }
  });
}

/** Fork `source` keeping turns `0..turnIndex`; resolves with the fork, titled `Fork: <title>`. */
export async function forkAtTurn(source: Session, turnIndex: number): Promise<Session> {
  let wire: string;
  try {
    wire = await Deno.readTextFile(source.wireFile);
  } catch {
    throw new ForkError("wire.jsonl not found");
  }
  const wireLines = wire.split("\n");
  const turnStarts = wireLines.flatMap((l, i) => (isTurnBegin(l) ? [i] : []));
  if (turnStarts.length === 0 || turnIndex > turnStarts.length - 1) {
    throw new ForkError(
      `turn_index ${turnIndex} out of range (max turn: ${turnStarts.length - 1})`,
    );
  }
  const fork = await forkSession(source, { title: `Fork: ${await source.title()}` });
  try {
    const next = turnStarts[turnIndex + 1];
    if (next !== undefined) {
      await atomicWriteText(fork.wireFile, wireLines.slice(0, next).join("\n") + "\n");
      const context = await Deno.readTextFile(fork.contextFile).catch(() => "");
      const cps = turnCheckpoints(context);
      const cut = cps[turnIndex + 1];
      if (cut !== undefined) {
        const lines = context.split("\n");
        const at = checkpointLine(lines, cut);
        if (at >= 0) await atomicWriteText(fork.contextFile, lines.slice(0, at).join("\n") + "\n");
      }
    }
  } catch (err) {
    await fork.delete().catch(() => {});
    throw err;
  }
  return fork;
}
