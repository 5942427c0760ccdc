/**
 * One-line texts the shell shows for goal and swarm progress (`GoalUpdate`, `SwarmUpdate`).
 *
 * @module
 */
import type { EventPayload } from "../../wire/messages.ts";

/** The live line under an AgentSwarm call: `swarm 12/32 done · 4 running · ok 11, error 1`. */
export function swarmProgressLine(p: EventPayload<"SwarmUpdate">): string {
  const c = p.counts;
  const finished = c.ok + c.error + c.cancelled;
  const parts = [`swarm ${finished}/${p.total} done`, `${c.running} running`, `ok ${c.ok}`];
  if (c.error > 0) parts.push(`error ${c.error}`);
  if (c.cancelled > 0) parts.push(`cancelled ${c.cancelled}`);
  return parts.join(" · ");
}

/** The transcript line when a goal run ends (null while it goes on). */
export function goalOutcomeLine(p: EventPayload<"GoalUpdate">): string | null {
  const objective = p.goal?.objective ?? "";
  const reason = p.goal?.reason ? ` (${p.goal.reason})` : "";
  switch (p.outcome) {
    case null:
      return null;
    case "achieved":
      return `◎ Goal achieved.${p.queue.length > 0 ? ` ${p.queue.length} queued.` : ""}`;
    case "blocked":
      return `◎ Goal blocked${reason}: ${objective}`;
    case "budget_exhausted":
      return `◎ Goal budget exhausted${reason}: ${objective}`;
    case "paused":
    case "cancelled":
      return `◎ Goal paused${reason}: ${objective} — /goal resume continues it`;
  }
}
