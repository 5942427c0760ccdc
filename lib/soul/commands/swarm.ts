/**
 * `/swarm`: show the agent swarms of this session (this process): counts for each, and every
 * item's state for the latest one.
 *
 * @module
 */
import type { SwarmSnapshot } from "../../tooling/subagent_service.ts";
import type { SoulCommand } from "../slash_commands.ts";

const STATES = ["pending", "running", "ok", "error", "cancelled"] as const;

/** One line of counts: `ok 30, error 1, cancelled 1, running 0, pending 0`. */
export function swarmCountsLine(s: SwarmSnapshot): string {
  const n = (state: typeof STATES[number]) => s.items.filter((i) => i.state === state).length;
  return `ok ${n("ok")}, error ${n("error")}, cancelled ${n("cancelled")}, running ${
    n("running")
  }, pending ${n("pending")}`;
}

/** The `/swarm` text for the swarms, oldest first. */
export function describeSwarms(swarms: readonly SwarmSnapshot[]): string {
  if (swarms.length === 0) return "No agent swarm has run in this session yet.";
  const lines: string[] = [];
  for (const [i, s] of swarms.entries()) {
    const latest = i === swarms.length - 1;
    lines.push(
      `Swarm ${s.swarmId} (${s.done ? "done" : "running"}): ${s.description}: ` +
        `${s.items.length} items, concurrency ${s.concurrency}; ${swarmCountsLine(s)}`,
    );
    if (!latest) continue;
    for (const it of s.items) {
      const id = it.agentId ? ` ${it.agentId}` : "";
      const err = it.error ? ` - ${it.error.split("\n")[0].slice(0, 200)}` : "";
      lines.push(`  #${it.index} [${it.state}]${id} ${it.item.split("\n")[0].slice(0, 80)}${err}`);
    }
  }
  return lines.join("\n");
}

/** The `/swarm` command. */
export const swarmCommand: SoulCommand = {
  name: "swarm",
  description: "Show the agent swarms of this session and their items",
  aliases: [],
  run({ services, say }) {
    say(describeSwarms(services?.swarms?.() ?? []));
    return Promise.resolve();
  },
};
