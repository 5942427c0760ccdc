/**
 * What a subagent's failed turn tells its Agent call (`lib/subagents/turn_runner.ts`), now read
 * from the shared turn outcome: the messages and labels stay those the model and the UI saw.
 *
 * @module
 */
import { assertEquals, assertRejects } from "../../helpers/assert.ts";
import {
  APIConnectionError,
  APIStatusError,
  AUTH_EXPIRED_MESSAGE,
  AuthExpiredError,
} from "../../../lib/llm/errors.ts";
import { LLMNotSet, MaxStepsReached, RunCancelled } from "../../../lib/soul/errors.ts";
import type { KimiSoul } from "../../../lib/soul/soul.ts";
import { runCheckedTurn } from "../../../lib/subagents/turn_runner.ts";

/** A soul whose turn throws `err` (only what `runCheckedTurn` touches). */
function failingSoul(err: unknown): KimiSoul {
  return {
    run: () => Promise.reject(err),
    context: { history: [] },
  } as unknown as KimiSoul;
}

async function failureFor(err: unknown, dir: string) {
  return await runCheckedTurn(failingSoul(err), "go", {
    signal: new AbortController().signal,
    phase: "running the task",
    forwarding: {
      emit: () => {},
      parentToolCallId: "tc1",
      agentId: "a1",
      subagentType: "coder",
      wirePath: `${dir}/wire.jsonl`,
    },
  });
}

Deno.test("subagent turn: each failure keeps its message and label", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kimi-turn-runner-" });
  try {
    assertEquals(await failureFor(new MaxStepsReached(12), dir), {
      message: "Max steps 12 reached when running the task. Please try splitting the task " +
        "into smaller subtasks.",
      brief: "Max steps reached",
    });
    assertEquals(await failureFor(new APIStatusError(500, "upstream broke"), dir), {
      message: "LLM API error (HTTP 500) when running the task: upstream broke",
      brief: "API error (500)",
    });
    assertEquals(await failureFor(new AuthExpiredError(), dir), {
      message: `LLM API error (HTTP 401) when running the task: ${AUTH_EXPIRED_MESSAGE}`,
      brief: "API error (401)",
    });
    assertEquals(await failureFor(new APIConnectionError(), dir), {
      message: "LLM provider error when running the task: Connection error.",
      brief: "LLM provider error",
    });
    assertEquals(await failureFor(new LLMNotSet(), dir), {
      message: "Unexpected error when running the task: LLM not set",
      brief: "Agent run error",
    });
    assertEquals(await failureFor("odd", dir), {
      message: "Unexpected error when running the task: odd",
      brief: "Agent run error",
    });
    await assertRejects(() => failureFor(new RunCancelled(), dir), RunCancelled);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
