/** The shell's goal and swarm progress lines. */
import { assertEquals } from "../../helpers/assert.ts";
import { goalOutcomeLine, swarmProgressLine } from "../../../lib/ui/shell/progress_lines.ts";

Deno.test("shell: swarm progress line counts finished items and shows errors only when any", () => {
  const base = {
    swarm_id: "s",
    parent_tool_call_id: "tc",
    description: "d",
    total: 32,
    concurrency: 4,
    item: null,
    done: false,
  };
  assertEquals(
    swarmProgressLine({
      ...base,
      counts: { pending: 16, running: 4, ok: 11, error: 1, cancelled: 0 },
    }),
    "swarm 12/32 done · 4 running · ok 11 · error 1",
  );
  assertEquals(
    swarmProgressLine({
      ...base,
      counts: { pending: 0, running: 0, ok: 0, error: 0, cancelled: 32 },
    }),
    "swarm 32/32 done · 0 running · ok 0 · cancelled 32",
  );
});

Deno.test("shell: a goal line only when a goal run ends", () => {
  const goal = {
    id: "g",
    objective: "Fix it",
    status: "budget_exhausted" as const,
    reason: "budget: turns 2/2",
    notes: [],
    budget: { max_turns: 2, max_steps: null, max_tokens: null, max_seconds: null },
    usage: { turns: 2, steps: 4, tokens: 0, seconds: 1 },
    created_at: 0,
    updated_at: 0,
  };
  assertEquals(goalOutcomeLine({ goal, queue: [], outcome: null }), null);
  assertEquals(
    goalOutcomeLine({ goal, queue: [], outcome: "budget_exhausted" }),
    "◎ Goal budget exhausted (budget: turns 2/2): Fix it",
  );
  assertEquals(
    goalOutcomeLine({ goal: null, queue: ["next"], outcome: "achieved" }),
    "◎ Goal achieved. 1 queued.",
  );
});
