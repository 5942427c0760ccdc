/**
 * Parameter schema goldens of Shell, TaskList, TaskOutput, TaskStop, Think, SetTodoList,
 * AskUserQuestion, FetchURL and SearchWeb: the JSON Schema the model sees
 * (`z.toJSONSchema(parameters, {io: "input"})` minus `$schema`) must have the reference's
 * structure (names, types, defaults, bounds, required), as in the reference's
 * `tests/tools/test_tool_schemas.py`. Parameter descriptions are our own wording, so they are
 * compared only for presence.
 *
 * @module
 */
import * as z from "zod";
import { FULL_SCOPE } from "../../../lib/tooling/scope.ts";
import type { Tool, ToolEnv, ToolFactory } from "../../../lib/tooling/tool.ts";
import { askUserQuestionTool } from "../../../tools/ask_user_question.ts";
import { fetchUrlTool } from "../../../tools/fetch_url.ts";
import { searchWebTool } from "../../../tools/search_web.ts";
import { setTodoListTool } from "../../../tools/set_todo_list.ts";
import { shellTool } from "../../../tools/shell.ts";
import { taskListTool } from "../../../tools/task_list.ts";
import { taskOutputTool } from "../../../tools/task_output.ts";
import { taskStopTool } from "../../../tools/task_stop.ts";
import { thinkTool } from "../../../tools/think.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { makeSessionRun } from "../../helpers/tool_env.ts";

const ENV: ToolEnv = {
  workDir: "/tmp",
  additionalDirs: () => [],
  shareDir: "/tmp",
  sessionDir: "/tmp",
  run: makeSessionRun({ shareDir: "/tmp", sessionDir: "/tmp" }),
  sessionId: "s",
  modelCapabilities: new Set(),
  isRoot: true,
  scope: FULL_SCOPE,
  services: {
    moonshotSearch: { baseUrl: "http://127.0.0.1:1/search", apiKey: "k", customHeaders: {} },
    moonshotFetch: null,
  },
  background: {
    maxRunningTasks: 4,
    readMaxBytes: 30_000,
    notificationTailLines: 20,
    notificationTailChars: 3000,
    killGracePeriodMs: 2000,
  },
  childEnv: () => ({ PATH: "/usr/bin:/bin" }),
  planMode: () => ({ active: false, planFile: null }),
  todos: { get: () => [], set: () => Promise.resolve() },
  emit: () => {},
  askQuestions: () => Promise.resolve(null),
  isAfk: () => false,
};

function modelSchema(tool: Tool): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(tool.parameters, { io: "input" }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** A copy without `description` keys, plus the paths of properties lacking one. */
function skeleton(value: unknown, path = "", missing: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((v, i) => skeleton(v, `${path}[${i}]`, missing));
  if (!value || typeof value !== "object") return value;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === "description") continue;
    if (k === "properties") {
      const props: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries(v as Record<string, unknown>)) {
        const d = (prop as Record<string, unknown>).description;
        if (typeof d !== "string" || !d.trim()) missing.push(`${path}.${name}`);
        props[name] = skeleton(prop, `${path}.${name}`, missing);
      }
      out[k] = props;
    } else {
      out[k] = skeleton(v, `${path}.${k}`, missing);
    }
  }
  return out;
}

const TODO_ITEM = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1 },
    status: { type: "string", enum: ["pending", "in_progress", "done"] },
  },
  required: ["title", "status"],
};

const GOLDENS: Array<[string, ToolFactory, Record<string, unknown>]> = [
  ["Shell", shellTool, {
    type: "object",
    properties: {
      command: { type: "string" },
      timeout: { type: "integer", default: 60, minimum: 1, maximum: 86400 },
      run_in_background: { type: "boolean", default: false },
      description: { type: "string", default: "" },
    },
    required: ["command"],
  }],
  ["TaskList", taskListTool, {
    type: "object",
    properties: {
      active_only: { type: "boolean", default: true },
      limit: { type: "integer", default: 20, minimum: 1, maximum: 100 },
    },
  }],
  ["TaskOutput", taskOutputTool, {
    type: "object",
    properties: {
      task_id: { type: "string" },
      block: { type: "boolean", default: false },
      timeout: { type: "integer", default: 30, minimum: 0, maximum: 3600 },
    },
    required: ["task_id"],
  }],
  ["TaskStop", taskStopTool, {
    type: "object",
    properties: {
      task_id: { type: "string" },
      reason: { type: "string", default: "Stopped by TaskStop" },
    },
    required: ["task_id"],
  }],
  ["Think", thinkTool, {
    type: "object",
    properties: { thought: { type: "string" } },
    required: ["thought"],
  }],
  ["SetTodoList", setTodoListTool, {
    type: "object",
    properties: {
      todos: {
        anyOf: [{ type: "array", items: TODO_ITEM }, { type: "null" }],
        default: null,
      },
    },
  }],
  ["AskUserQuestion", askUserQuestionTool, {
    type: "object",
    properties: {
      questions: {
        type: "array",
        minItems: 1,
        maxItems: 4,
        items: {
          type: "object",
          properties: {
            question: { type: "string" },
            header: { type: "string", default: "" },
            options: {
              type: "array",
              minItems: 2,
              maxItems: 4,
              items: {
                type: "object",
                properties: {
                  label: { type: "string" },
                  description: { type: "string", default: "" },
                },
                required: ["label"],
              },
            },
            multi_select: { type: "boolean", default: false },
          },
          required: ["question", "options"],
        },
      },
    },
    required: ["questions"],
  }],
  ["FetchURL", fetchUrlTool, {
    type: "object",
    properties: { url: { type: "string" } },
    required: ["url"],
  }],
  ["SearchWeb", searchWebTool, {
    type: "object",
    properties: {
      query: { type: "string" },
      limit: { type: "integer", default: 5, minimum: 1, maximum: 20 },
      include_content: { type: "boolean", default: false },
    },
    required: ["query"],
  }],
];

for (const [name, factory, expected] of GOLDENS) {
  Deno.test(`${name} parameter schema matches the reference`, async () => {
    const tool = await factory(ENV);
    assert(tool, `${name} should be offered`);
    assertEquals(tool.name, name);
    assert(tool.description.trim().length > 100, `${name} needs a real description`);
    assert(!tool.description.includes("${"), `${name} description has an unrendered variable`);
    const missing: string[] = [];
    const actual = modelSchema(tool);
    assertEquals(skeleton(actual, "", missing), expected);
    assertEquals(missing, [], `${name} properties without a description`);
    // Property order is part of what the model reads: keep the reference's order.
    assertEquals(
      Object.keys(actual.properties as object),
      Object.keys(expected.properties as object),
    );
  });
}

Deno.test("SetTodoList todo items describe title and status", async () => {
  const tool = await setTodoListTool(ENV);
  const schema = modelSchema(tool!) as any;
  const item = schema.properties.todos.anyOf[0].items.properties;
  assert(item.title.description && item.status.description);
});
