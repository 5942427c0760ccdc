/**
 * `/undo [n]`: rewind the conversation to before the n-th last user turn, put back the files
 * the agent changed since (a file changed by something else since is left alone) and revoke
 * the session approvals granted since.
 *
 * @module
 */
import { relative } from "node:path";
import type { RestoreReport } from "../../session/file_snapshots.ts";
import type { SoulCommand } from "../slash_commands.ts";

/**
 * The checkpoints that start a user turn, oldest first, read from a `context.jsonl` text: a
 * `_checkpoint` record followed (past any `CHECKPOINT n` marker) by a user message that is not
 * injected by the system (`<system>...`: D-Mail delivery, compaction summary).
 */
export function turnCheckpoints(contextText: string): number[] {
  const out: number[] = [];
  let pending: number | null = null;
  for (const line of contextText.split("\n")) {
    if (!line.trim()) continue;
    let rec: { role?: unknown; id?: unknown; content?: unknown };
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    if (!rec || typeof rec !== "object" || typeof rec.role !== "string") continue;
    if (rec.role === "_checkpoint") {
      pending = typeof rec.id === "number" ? rec.id : null;
      continue;
    }
    if (rec.role.startsWith("_")) continue;
    if (pending === null) continue;
    const text = firstText(rec.content);
    if (rec.role === "user" && text !== null && /^<system>CHECKPOINT \d+<\/system>$/.test(text)) {
      continue;
    }
    if (rec.role === "user" && !(text ?? "").startsWith("<system>")) out.push(pending);
    pending = null;
  }
  return out;
}

function firstText(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const first = content[0];
  if (
    first && typeof first === "object" && first.type === "text" && typeof first.text === "string"
  ) {
    return first.text;
  }
  return null;
}

/** The summary of an undo for the user. */
export function undoSummary(
  turns: number,
  report: RestoreReport | null,
  show: (path: string) => string = (p) => p,
): string {
  const lines = [turns === 1 ? "Undid the last turn." : `Undid the last ${turns} turns.`];
  if (report === null) {
    lines.push("File changes are not tracked for this agent: files were left as they are.");
    return lines.join("\n");
  }
  const { restored, conflicts, unavailable } = report;
  if (restored.length > 0) {
    const noun = restored.length === 1 ? "file" : "files";
    lines.push(`Restored ${restored.length} ${noun}: ${restored.map(show).join(", ")}.`);
  }
  for (const c of conflicts) lines.push(`\`${show(c.path)}\` ${c.reason}; left as it is.`);
  for (const p of unavailable) {
    lines.push(
      `\`${show(p)}\` can no longer be restored: its snapshot was evicted to keep the ` +
        "snapshot storage under its size cap; left as it is.",
    );
  }
  if (restored.length + conflicts.length + unavailable.length === 0) {
    lines.push("No files had been changed by the agent since.");
  }
  return lines.join("\n");
}

/** What `/undo` says when it put back an earlier state of the session goal. */
export function goalRewindNote(objective: string | null): string {
  return objective === null
    ? "The goal set in the undone turns was removed."
    : `The goal was rewound with the turns (now paused; /goal resume continues it): ${objective}`;
}

/** The `/undo` command. */
export const undoCommand: SoulCommand = {
  name: "undo",
  description: "Undo the last n turns (default 1): rewind the conversation and restore files",
  aliases: [],
  async run({ soul, args, services, say }) {
    const n = args === "" ? 1 : /^\d+$/.test(args) ? Number(args) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) {
      say(
        `Usage: /undo [n], where n is how many turns to undo (a whole number from 1); got "${args}".`,
      );
      return;
    }
    let text = "";
    try {
      text = await Deno.readTextFile(soul.context.file);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    const turns = turnCheckpoints(text);
    if (turns.length === 0) {
      say("There is nothing to undo: the conversation has no turns yet.");
      return;
    }
    if (n > turns.length) {
      say(
        `There ${turns.length === 1 ? "is only 1 turn" : `are only ${turns.length} turns`} to ` +
          `undo; nothing was undone. Use /undo ${turns.length} to undo ${
            turns.length === 1 ? "it" : "them all"
          }.`,
      );
      return;
    }
    const checkpoint = turns[turns.length - n];
    await soul.context.revertTo(checkpoint);
    const goalRewound = (await soul.goals?.rewindTo(checkpoint)) ?? false;
    const report = soul.fileSnapshots ? await soul.fileSnapshots.restoreSince(checkpoint) : null;
    const revoked = await soul.approval.state.revokeSince(checkpoint);
    const workDir = services?.workDir;
    const show = (p: string) => {
      if (!workDir) return p;
      const rel = relative(workDir, p);
      return rel.startsWith("..") || rel.startsWith("/") ? p : rel;
    };
    let summary = undoSummary(n, report, show);
    if (revoked.length > 0) {
      summary +=
        `\nRevoked session approvals granted in ${n === 1 ? "that turn" : "those turns"}: ` +
        `${revoked.map((p) => `\`${p}\``).join(", ")}.`;
    }
    say(summary);
    if (goalRewound) say(goalRewindNote(soul.goals?.current()?.objective ?? null));
    soul.emitContextStatus();
  },
};
