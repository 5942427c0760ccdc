/**
 * Think, SetTodoList and AskUserQuestion.
 *
 * @module
 */
import { FULL_SCOPE } from "../../../lib/tooling/scope.ts";
import type { Tool, ToolCallContext, ToolEnv, ToolReturnValue } from "../../../lib/tooling/tool.ts";
import type { TodoItem } from "../../../lib/wire/display.ts";
import type { Question } from "../../../lib/wire/messages.ts";
import { askUserQuestionTool } from "../../../tools/ask_user_question.ts";
import { setTodoListTool } from "../../../tools/set_todo_list.ts";
import { thinkTool } from "../../../tools/think.ts";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { makeSessionRun, runTool } from "../../helpers/tool_env.ts";

// ---- private fakes (tests/helpers/tool_env.ts is owned by another engineer) ----

/** A todo store that records what was persisted, like state.json would. */
class FakeTodoStore {
  items: TodoItem[] = [];
  saves: TodoItem[][] = [];
  get(): TodoItem[] {
    return this.items;
  }
  set(items: TodoItem[]): Promise<void> {
    this.items = items;
    this.saves.push(structuredClone(items));
    return Promise.resolve();
  }
}

function fakeEnv(over: Partial<ToolEnv> = {}): ToolEnv {
  return {
    workDir: "/tmp",
    additionalDirs: () => [],
    shareDir: "/tmp",
    sessionDir: "/tmp",
    run: makeSessionRun({ shareDir: "/tmp", sessionDir: "/tmp" }),
    sessionId: "s",
    modelCapabilities: new Set(),
    isRoot: true,
    scope: FULL_SCOPE,
    services: { moonshotSearch: null, moonshotFetch: null },
    background: {
      maxRunningTasks: 4,
      readMaxBytes: 30_000,
      notificationTailLines: 20,
      notificationTailChars: 3000,
      killGracePeriodMs: 2000,
    },
    childEnv: () => ({}),
    planMode: () => ({ active: false, planFile: null }),
    todos: new FakeTodoStore(),
    emit: () => {},
    askQuestions: () => Promise.resolve(null),
    isAfk: () => false,
    ...over,
  };
}

const ctx: ToolCallContext = {
  toolCallId: "call-q",
  signal: new AbortController().signal,
  requestApproval: () => Promise.resolve({ approved: true }),
};

async function build(factory: (env: ToolEnv) => unknown, env: ToolEnv): Promise<Tool> {
  const tool = await factory(env);
  assert(tool);
  return tool as Tool;
}

function call(tool: Tool, raw: unknown): Promise<ToolReturnValue> {
  return runTool(tool, raw, ctx);
}

// ---- Think ----

Deno.test("Think logs the thought and returns nothing", async () => {
  const tool = await build(thinkTool, fakeEnv());
  assertEquals(tool.name, "Think");
  const rv = await call(tool, { thought: "first read the config, then the tests" });
  assertEquals(rv, {
    is_error: false,
    output: "",
    message: "Thought logged",
    display: [],
    extras: null,
  });
  assertEquals(tool.parameters.safeParse({}).success, false);
});

// ---- SetTodoList ----

Deno.test("SetTodoList read mode on an empty list", async () => {
  const tool = await build(setTodoListTool, fakeEnv());
  const rv = await call(tool, {});
  assertEquals(rv, {
    is_error: false,
    output: "Todo list is empty.",
    message: "",
    display: [],
    extras: null,
  });
});

Deno.test("SetTodoList persists the list, shows it, and reads it back", async () => {
  const store = new FakeTodoStore();
  const tool = await build(setTodoListTool, fakeEnv({ todos: store }));
  const todos = [
    { title: "Read the spec", status: "done" },
    { title: "Write the tool", status: "in_progress" },
    { title: "Test it", status: "pending" },
  ];
  const rv = await call(tool, { todos });
  assertEquals(rv, {
    is_error: false,
    output: "Todo list updated",
    message: "Todo list updated",
    display: [{ type: "todo", items: todos }],
    extras: null,
  });
  assertEquals(store.saves, [todos]);

  const read = await call(tool, { todos: null });
  assertEquals(
    read.output,
    "Current todo list:\n- [done] Read the spec\n- [in_progress] Write the tool\n- [pending] Test it",
  );
  assertEquals(read.message, "");
  assertEquals(store.saves.length, 1, "read mode must not write");

  const cleared = await call(tool, { todos: [] });
  assertEquals(cleared.display, [{ type: "todo", items: [] }]);
  assertEquals(store.saves.at(-1), []);
  assertEquals((await call(tool, {})).output, "Todo list is empty.");
});

Deno.test("SetTodoList rejects empty titles and unknown statuses", async () => {
  const tool = await build(setTodoListTool, fakeEnv());
  assertEquals(
    tool.parameters.safeParse({ todos: [{ title: "", status: "done" }] }).success,
    false,
  );
  assertEquals(
    tool.parameters.safeParse({ todos: [{ title: "a", status: "later" }] }).success,
    false,
  );
});

// ---- AskUserQuestion ----

const QUESTIONS = {
  questions: [{
    question: "Which database?",
    header: "DB",
    options: [{ label: "Postgres", description: "Relational" }, { label: "SQLite" }],
  }],
};

Deno.test("AskUserQuestion auto-dismisses in afk mode without asking", async () => {
  let asked = false;
  const tool = await build(
    askUserQuestionTool,
    fakeEnv({
      isAfk: () => true,
      askQuestions: () => {
        asked = true;
        return Promise.resolve({});
      },
    }),
  );
  const rv = await call(tool, QUESTIONS);
  assertEquals(rv, {
    is_error: false,
    output:
      '{"answers": {}, "note": "Running in afk mode. No user is present. Make your own decision."}',
    message: "Afk mode, auto-dismissed.",
    display: [{ type: "brief", text: "Auto-dismissed (afk)" }],
    extras: null,
  });
  assertEquals(asked, false);
});

Deno.test("AskUserQuestion tells the model when the client cannot ask", async () => {
  const tool = await build(
    askUserQuestionTool,
    fakeEnv({ askQuestions: () => Promise.resolve(null) }),
  );
  const rv = await call(tool, QUESTIONS);
  assertEquals(rv.is_error, true);
  assertEquals(
    rv.message,
    "The connected client does not support interactive questions. Do NOT call this tool again. " +
      "Ask the user directly in your text response instead.",
  );
  assertEquals(rv.display, [{ type: "brief", text: "Client unsupported" }]);
});

Deno.test("AskUserQuestion reports a dismissal", async () => {
  const tool = await build(
    askUserQuestionTool,
    fakeEnv({ askQuestions: () => Promise.resolve({}) }),
  );
  const rv = await call(tool, QUESTIONS);
  assertEquals(rv, {
    is_error: false,
    output: '{"answers": {}, "note": "User dismissed the question without answering."}',
    message: "User dismissed the question without answering.",
    display: [{ type: "brief", text: "User dismissed" }],
    extras: null,
  });
});

Deno.test("AskUserQuestion sends the questions and returns the answers as JSON", async () => {
  const seen: Array<{ id: string; questions: Question[] }> = [];
  const tool = await build(
    askUserQuestionTool,
    fakeEnv({
      askQuestions: (id, questions) => {
        seen.push({ id, questions });
        return Promise.resolve({ "Which database?": "Postgres", "Größe?": 'groß, "sehr"' });
      },
    }),
  );
  const rv = await call(tool, QUESTIONS);
  assertEquals(rv.is_error, false);
  assertEquals(
    rv.output,
    '{"answers": {"Which database?": "Postgres", "Größe?": "groß, \\"sehr\\""}}',
  );
  assertEquals(rv.message, "User has answered.");
  assertEquals(rv.display, [{ type: "brief", text: "User answered" }]);
  assertEquals(seen, [{
    id: "call-q",
    questions: [{
      question: "Which database?",
      header: "DB",
      options: [{ label: "Postgres", description: "Relational" }, {
        label: "SQLite",
        description: "",
      }],
      multi_select: false,
      body: "",
      other_label: "",
      other_description: "",
    }],
  }]);
});

Deno.test("AskUserQuestion turns a failed request into a tool error", async () => {
  const tool = await build(
    askUserQuestionTool,
    fakeEnv({ askQuestions: () => Promise.reject(new Error("wire closed")) }),
  );
  const rv = await call(tool, QUESTIONS);
  assertEquals(rv.is_error, true);
  assertEquals(rv.message, "Failed to get user response.");
});

Deno.test("AskUserQuestion validates counts and adds a plan-mode note", async () => {
  let plan = false;
  const tool = await build(
    askUserQuestionTool,
    fakeEnv({ planMode: () => ({ active: plan, planFile: null }) }),
  );
  const p = tool.parameters;
  assertEquals(p.safeParse({ questions: [] }).success, false);
  assertEquals(
    p.safeParse({ questions: [{ question: "q?", options: [{ label: "only" }] }] }).success,
    false,
  );
  const five = Array.from({ length: 5 }, () => QUESTIONS.questions[0]);
  assertEquals(p.safeParse({ questions: five }).success, false);
  const normal = tool.description;
  plan = true;
  assert(tool.description.startsWith(normal));
  assertStringIncludes(tool.description, "ExitPlanMode");
});
