/**
 * The Agent tool on its own: the type listing in its description, its parameter schema and
 * the errors it gives before any subagent runs.
 */
import { assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { makeCallContext, makeToolEnv, modelSchema, runTool } from "../../helpers/tool_env.ts";
import { agentTool, foregroundResult, subagentTypeLine } from "../../../tools/agent.ts";
import { loadAgentSpec } from "../../../lib/agent/spec.ts";
import { SubagentManager } from "../../../lib/subagents/service.ts";
import { SubagentStore } from "../../../lib/subagents/instance_store.ts";
import type { SubagentService } from "../../../lib/tooling/subagent_service.ts";

function fakeService(over: Partial<SubagentService> = {}): SubagentService {
  return {
    types: () => Promise.resolve([]),
    hasModel: (a) => a === "known",
    runForeground: () => {
      throw new Error("must not run");
    },
    runBackground: () => {
      throw new Error("must not run");
    },
    runSwarm: () => {
      throw new Error("must not run");
    },
    swarms: () => [],
    ...over,
  };
}

Deno.test("Agent: description lists the default agent's types from their specs", async () => {
  const rootSpec = await loadAgentSpec({ builtin: "default" });
  const service = new SubagentManager({
    parent: null as never,
    parentEnv: () => null as never,
    rootSpec,
    store: new SubagentStore("/nonexistent"),
    hasModel: () => false,
    llmForAlias: () => Promise.resolve(null),
    renderSystemPrompt: () => Promise.resolve(""),
    loadTools: () => Promise.resolve([]),
    agentTaskTimeoutS: 900,
    swarmConcurrency: 8,
  });
  const types = await service.types();
  assertEquals(types.map((t) => t.name), ["coder", "explore", "plan"]);
  const tool = (await agentTool(makeToolEnv({ subagents: service })))!;
  assertEquals(tool.name, "Agent");
  assertStringIncludes(
    tool.description,
    "- `plan`: Designs an implementation plan from reading code and docs; no shell, no edits. " +
      "(Tools: ReadFile, ReadMediaFile, Glob, Grep, SearchWeb, FetchURL, Model: inherit, " +
      "Background: yes). When to use: Designing how to implement a change before any code is " +
      "written: architecture decisions, affected files, ordering of steps and verification strategy.",
  );
  assertStringIncludes(tool.description, "- `coder`: General software engineering");
  assertEquals(
    subagentTypeLine({
      name: "x",
      description: "D",
      tools: null,
      model: "fast",
      background: true,
      whenToUse: null,
    }),
    "- `x`: D (Tools: *, Model: fast, Background: yes).",
  );
  const schema = modelSchema(tool) as { required: string[]; properties: Record<string, any> };
  assertEquals(schema.required, ["description", "prompt"]);
  assertEquals(schema.properties.subagent_type.default, "coder");
  assertEquals(schema.properties.timeout.anyOf, [
    { type: "integer", minimum: 30, maximum: 3600 },
    { type: "null" },
  ]);
});

Deno.test("Agent: errors before running (nesting, unknown model, no types); background routing", async () => {
  const args = { description: "d", prompt: "p" };
  const sub = (await agentTool(makeToolEnv({ isRoot: false, subagents: fakeService() })))!;
  let rv = await runTool(sub, args, makeCallContext());
  assertEquals([rv.is_error, rv.message], [true, "Subagents cannot launch other subagents."]);

  const root = (await agentTool(makeToolEnv({ subagents: fakeService() })))!;
  rv = await runTool(root, { ...args, model: "nope" }, makeCallContext());
  assertEquals([rv.is_error, rv.message], [true, "Unknown model alias: nope"]);

  const seen: string[] = [];
  const routed = (await agentTool(makeToolEnv({
    subagents: fakeService({
      runBackground: (req, ctx) => {
        seen.push(`bg:${req.subagentType}:${req.timeoutS}:${ctx.toolCallId}`);
        return Promise.resolve({
          status: "started" as const,
          agentId: "a1b2c3d4",
          actualType: "coder",
          task: { id: "agent-1a2b3c4d", kind: "agent", status: "running", description: "d" },
        });
      },
    }),
  })))!;
  rv = await runTool(
    routed,
    { ...args, run_in_background: true, timeout: 60 },
    makeCallContext({ toolCallId: "tc-9" }),
  );
  assertEquals([rv.is_error, rv.message], [false, "Background task started."]);
  assertStringIncludes(
    rv.output as string,
    "task_id: agent-1a2b3c4d\nkind: agent\nstatus: running\n",
  );
  assertStringIncludes(
    rv.output as string,
    'resume_hint: Use Agent(resume="a1b2c3d4", prompt="...")',
  );
  assertEquals(seen, ["bg:coder:60:tc-9"]);

  const bare = (await agentTool(makeToolEnv({})))!;
  rv = await runTool(bare, args, makeCallContext());
  assertEquals(rv.is_error, true);
  assertStringIncludes(rv.message, "declares no subagent types");
});

Deno.test("Agent: foreground results are worded by the tool (summary, resume type, timeout, cancel)", () => {
  const done = foregroundResult({
    status: "completed",
    agentId: "a1",
    actualType: "explore",
    resumed: true,
    summary: "All done.",
  }, "coder");
  assertEquals(done.is_error, false);
  assertEquals(
    done.output,
    "agent_id: a1\nresumed: true\nrequested_subagent_type: coder\nactual_subagent_type: explore\n" +
      "status: completed\n\n[summary]\nAll done.",
  );
  const late = foregroundResult({ status: "timed_out", timeoutS: 60 }, "coder");
  assertEquals([late.is_error, late.message], [true, "Agent timed out after 60s."]);
  const gone = foregroundResult({ status: "cancelled" }, "coder");
  assertEquals([gone.is_error, gone.message], [true, "Subagent run was cancelled."]);
  const bad = foregroundResult({
    status: "error",
    message: "Unknown subagent type: x.",
    brief: "b",
  }, "x");
  assertEquals([bad.is_error, bad.message], [true, "Unknown subagent type: x."]);
});
