/**
 * `/goal`: set, inspect and steer the session goal.
 *
 * - `/goal [--max-turns N] [--max-steps N] [--max-tokens N] [--max-time 30m] <objective>` starts
 *   a goal and pursues it; `/goal` or `/goal status` shows it.
 * - `/goal pause`, `/goal resume`, `/goal cancel` (`clear`), `/goal replace <objective>`.
 * - `/goal next <objective>` queues a goal (starts it at once when there is none);
 *   `/goal queue` lists the queue, `/goal queue clear` empties it.
 * - `/goal budget <n> <turns|steps|tokens|seconds|minutes|hours>` sets a limit.
 *
 * @module
 */
import type { GoalBudget } from "../../session/goal_state.ts";
import { BUDGET_UNITS, budgetLimit, type BudgetUnit, describeGoal, USER_PAUSE } from "../goal.ts";
import { goalStartMessage } from "../goal_runner.ts";
import type { GoalStore } from "../goal.ts";
import type { CommandHost, SoulCommand } from "../slash_commands.ts";

/** Usage text of `/goal`. */
export const GOAL_USAGE = [
  "Usage:",
  "  /goal [--max-turns N] [--max-steps N] [--max-tokens N] [--max-time 30m] <objective>",
  "  /goal [status] | pause | resume | cancel | replace <objective>",
  "  /goal next <objective> | queue [clear] | budget <n> <turns|steps|tokens|seconds|minutes|hours>",
].join("\n");

/** Parsed `/goal <objective>` with its budget flags, or an error text. */
export function parseGoalStart(
  args: string,
): { objective: string; budget: Partial<GoalBudget> } | string {
  const budget: Partial<GoalBudget> = {};
  let rest = args.trim();
  const flag = /^--(max-turns|max-steps|max-tokens|max-time)(?:=|\s+)(\S+)\s*/;
  for (let m = flag.exec(rest); m; m = flag.exec(rest)) {
    rest = rest.slice(m[0].length);
    const [, name, raw] = m;
    let limit: Partial<GoalBudget> | string;
    if (name === "max-time") {
      const t = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(raw);
      if (!t) return `--max-time takes a duration such as 90s, 30m or 2h; got "${raw}".`;
      const unit: BudgetUnit = t[2] === "h" ? "hours" : t[2] === "m" ? "minutes" : "seconds";
      limit = budgetLimit(Number(t[1]), unit);
    } else {
      if (!/^\d+$/.test(raw)) return `--${name} takes a whole number; got "${raw}".`;
      const unit = name === "max-turns" ? "turns" : name === "max-steps" ? "steps" : "tokens";
      limit = budgetLimit(Number(raw), unit);
    }
    if (typeof limit === "string") return limit;
    Object.assign(budget, limit);
  }
  if (!rest) return `The objective is missing.\n${GOAL_USAGE}`;
  return { objective: rest, budget };
}

async function startGoal(
  soul: CommandHost,
  goals: GoalStore,
  args: string,
  replace: boolean,
  say: (text: string) => void,
): Promise<void> {
  const parsed = parseGoalStart(args);
  if (typeof parsed === "string") {
    say(parsed);
    return;
  }
  const created = await goals.create(parsed.objective, {
    replace,
    at: soul.context.nCheckpoints,
    budget: parsed.budget,
  });
  if (!created.ok || !created.goal) {
    say(created.ok ? "The goal could not be started." : created.error);
    return;
  }
  say(`Goal set: ${created.goal.objective}`);
  await soul.runGoal(goalStartMessage(created.goal));
}

/** The `/goal` command. */
export const goalCommand: SoulCommand = {
  name: "goal",
  description: "Set or manage the session goal. Usage: /goal [objective|status|pause|resume|...]",
  aliases: [],
  async run({ soul, args, say }) {
    const goals = soul.goals;
    if (!goals) {
      say("Goals are not available for this agent (they need the root agent of a session).");
      return;
    }
    const m = /^(\S+)(?:\s+([\s\S]*))?$/.exec(args.trim());
    const sub = (m?.[1] ?? "").toLowerCase();
    const rest = (m?.[2] ?? "").trim();
    switch (sub) {
      case "":
      case "status":
        if (rest) break;
        say(describeGoal(goals.current(), goals.queue()));
        return;
      case "pause":
        if (rest) break;
        say(
          (await goals.pause(USER_PAUSE))
            ? "Goal paused. /goal resume continues it."
            : "There is no active goal to pause.",
        );
        return;
      case "resume": {
        if (rest) break;
        const goal = goals.current();
        if (!goal) {
          say("There is no goal to resume. Start one with /goal <objective>.");
          return;
        }
        if (goal.status !== "active") {
          const changed = await goals.resume();
          if (!changed.ok) {
            say(changed.error);
            return;
          }
        }
        say(`Goal resumed: ${goal.objective}`);
        await soul.runGoal(null);
        return;
      }
      case "cancel":
      case "clear": {
        if (rest) break;
        const removed = await goals.clear();
        say(removed ? `Goal removed: ${removed.objective}` : "There is no goal.");
        return;
      }
      case "replace":
        await startGoal(soul, goals, rest, true, say);
        return;
      case "next": {
        if (!rest) {
          say(GOAL_USAGE);
          return;
        }
        if (!goals.current()) {
          await startGoal(soul, goals, rest, false, say);
          return;
        }
        const err = await goals.enqueue(rest);
        say(err ?? `Queued as goal ${goals.queue().length} after the current one.`);
        return;
      }
      case "queue":
        if (rest.toLowerCase() === "clear") {
          const n = await goals.clearQueue();
          say(`Removed ${n} queued goal${n === 1 ? "" : "s"}.`);
          return;
        }
        if (rest) break;
        say(
          goals.queue().length === 0
            ? "No goals are queued."
            : ["Next goals:", ...goals.queue().map((q, i) => `${i + 1}. ${q}`)].join("\n"),
        );
        return;
      case "budget": {
        const b = /^(\d+(?:\.\d+)?)\s+(\S+)$/.exec(rest);
        const unit = b?.[2].toLowerCase() as BudgetUnit | undefined;
        if (!b || !unit || !BUDGET_UNITS.includes(unit)) {
          say(`Usage: /goal budget <n> <${BUDGET_UNITS.join("|")}>`);
          return;
        }
        const limit = budgetLimit(Number(b[1]), unit);
        if (typeof limit === "string") {
          say(limit);
          return;
        }
        const changed = await goals.setBudget(limit);
        say(changed.ok ? `Goal budget set: ${b[1]} ${unit}.` : changed.error);
        return;
      }
      default:
        await startGoal(soul, goals, args, false, say);
        return;
    }
    // A subcommand word followed by more text is an objective (`/goal pause-free retries`).
    await startGoal(soul, goals, args, false, say);
  },
};
