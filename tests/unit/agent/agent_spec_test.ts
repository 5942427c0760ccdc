import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import {
  AgentSpecError,
  builtinAgentNames,
  loadAgentSpec,
  normalizeToolRef,
} from "../../../lib/agent/spec.ts";
import { readAsset } from "../../../lib/assets/mod.ts";

const DEFAULT_TOOLS = [
  "Agent",
  "AgentSwarm",
  "AskUserQuestion",
  "SetTodoList",
  "Shell",
  "TaskList",
  "TaskOutput",
  "TaskStop",
  "ReadFile",
  "ReadMediaFile",
  "Glob",
  "Grep",
  "WriteFile",
  "StrReplaceFile",
  "SearchWeb",
  "FetchURL",
  "ExitPlanMode",
  "EnterPlanMode",
  "CreateGoal",
  "GetGoal",
  "UpdateGoal",
  "SetGoalBudget",
];

const SUBAGENT_EXCLUDES = [
  "Agent",
  "AskUserQuestion",
  "SetTodoList",
  "EnterPlanMode",
  "ExitPlanMode",
];

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "agent_spec_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("default agent: empty name, the default tool list in order, prompt args", async () => {
  const spec = await loadAgentSpec({ builtin: "default" });
  assertEquals(spec.name, "");
  assertEquals(spec.tools, DEFAULT_TOOLS);
  assertEquals(spec.allowedTools, null);
  assertEquals(spec.excludeTools, []);
  assertEquals(spec.systemPromptArgs, { ROLE_ADDITIONAL: "" });
  assertEquals(spec.model, null);
  assertEquals(spec.whenToUse, null);
  assertEquals(spec.file, "builtin:agents/default/agent.yaml");
  assertEquals(spec.systemPrompt.source, "builtin:agents/default/system.md");
  assertEquals(spec.systemPrompt.template, readAsset("agents/default/system.md"));
  assertEquals(Object.keys(spec.subagents), ["coder", "explore", "plan"]);
  for (const sub of Object.values(spec.subagents)) assert(sub.description.length > 10);
});

Deno.test("okabe agent: SendDMail right after Agent, rest of default inherited", async () => {
  const spec = await loadAgentSpec({ builtin: "okabe" });
  assertEquals(spec.name, "");
  assertEquals(spec.tools, ["Agent", "SendDMail", ...DEFAULT_TOOLS.slice(1)]);
  // The issue-22 tools (AgentSwarm, goals) are part of the inherited default set.
  assertEquals(spec.systemPrompt.source, "builtin:agents/default/system.md");
  assertEquals(Object.keys(spec.subagents), ["coder", "explore", "plan"]);
  assertEquals(spec.file, "builtin:agents/okabe/agent.yaml");
});

Deno.test("built-in agent names", () => {
  assertEquals(builtinAgentNames(), ["default", "okabe"]);
});

Deno.test("subagent types: effective tools, excludes, role text, no nested subagents", async () => {
  const root = await loadAgentSpec({ builtin: "default" });
  const expected: Record<string, string[]> = {
    coder: [
      "Shell",
      "ReadFile",
      "ReadMediaFile",
      "Glob",
      "Grep",
      "WriteFile",
      "StrReplaceFile",
      "SearchWeb",
      "FetchURL",
    ],
    explore: ["Shell", "ReadFile", "ReadMediaFile", "Glob", "Grep", "SearchWeb", "FetchURL"],
    plan: ["ReadFile", "ReadMediaFile", "Glob", "Grep", "SearchWeb", "FetchURL"],
  };
  for (const [type, tools] of Object.entries(expected)) {
    const spec = await root.subagents[type].spec();
    assertEquals(spec.tools, tools, type);
    assertEquals(spec.allowedTools, tools, type);
    assertEquals(spec.excludeTools, SUBAGENT_EXCLUDES, type);
    assertEquals(spec.name, "", type);
    assertEquals(spec.file, `builtin:agents/default/${type}.yaml`);
    assertEquals(spec.systemPrompt.source, "builtin:agents/default/system.md");
    assertEquals(Object.keys(spec.subagents), [], type);
    assert(spec.systemPromptArgs.ROLE_ADDITIONAL.includes("subagent"), type);
    assert(spec.systemPromptArgs.ROLE_ADDITIONAL.includes("parent"), type);
    assert((spec.whenToUse ?? "").length > 20, type);
  }
});

Deno.test("custom YAML extending default with exclude_tools: [Shell]", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "agent.yaml");
    await Deno.writeTextFile(
      file,
      "version: 1\nagent:\n  extend: default\n  exclude_tools:\n    - Shell\n" +
        "  system_prompt_args:\n    EXTRA: hi\n",
    );
    const spec = await loadAgentSpec({ file });
    assertEquals(spec.tools, DEFAULT_TOOLS.filter((t) => t !== "Shell"));
    assertEquals(spec.excludeTools, ["Shell"]);
    assertEquals(spec.systemPromptArgs, { ROLE_ADDITIONAL: "", EXTRA: "hi" });
    assertEquals(spec.systemPrompt.source, "builtin:agents/default/system.md");
    assertEquals(spec.file, file);
    assertEquals(Object.keys(spec.subagents), ["coder", "explore", "plan"]);
  });
});

Deno.test("relative extend chain: child overrides, args merge, paths resolve per file", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "base"));
    await Deno.writeTextFile(join(dir, "base", "prompt.md"), "base ${A} ${B}");
    await Deno.writeTextFile(
      join(dir, "base", "agent.yaml"),
      [
        "version: '1'",
        "agent:",
        "  name: base",
        "  system_prompt_path: ./prompt.md",
        "  system_prompt_args: {A: a0, B: b0}",
        "  model: fast",
        "  when_to_use: base use",
        "  tools: [kimi_cli.tools.shell:Shell, kimi_cli.tools.file:ReadFile]",
        "  subagents:",
        "    helper: {path: ./helper.yaml, description: helps}",
      ].join("\n"),
    );
    await Deno.writeTextFile(
      join(dir, "base", "helper.yaml"),
      "version: 1\nagent:\n  extend: ./agent.yaml\n  name: helper\n  subagents:\n",
    );
    const child = join(dir, "child.yaml");
    await Deno.writeTextFile(
      child,
      [
        "version: 1",
        "agent:",
        "  extend: ./base/agent.yaml",
        "  system_prompt_args: {B: b1}",
        "  model: null",
        "  allowed_tools: [ReadFile, Grep, ReadFile]",
      ].join("\n"),
    );
    const spec = await loadAgentSpec({ file: child });
    assertEquals(spec.name, "base");
    assertEquals(spec.systemPrompt, {
      template: "base ${A} ${B}",
      source: join(dir, "base", "prompt.md"),
    });
    assertEquals(spec.systemPromptArgs, { A: "a0", B: "b1" });
    assertEquals(spec.model, null);
    assertEquals(spec.whenToUse, "base use");
    assertEquals(spec.allowedTools, ["ReadFile", "Grep", "ReadFile"]);
    assertEquals(spec.tools, ["ReadFile", "Grep"]);
    const helper = await spec.subagents.helper.spec();
    assertEquals(spec.subagents.helper.description, "helps");
    assertEquals(helper.name, "helper");
    assertEquals(helper.file, join(dir, "base", "helper.yaml"));
    assertEquals(helper.tools, ["Shell", "ReadFile"]);
    assertEquals(helper.model, "fast");
    assertEquals(helper.subagents, {});
  });
});

Deno.test("reference-style tool paths normalise to our names; custom modules resolve", () => {
  const cases: [string, string][] = [
    ["kimi_cli.tools.shell:Shell", "Shell"],
    ["kimi_cli.tools.file:ReadFile", "ReadFile"],
    ["kimi_cli.tools.file:StrReplaceFile", "StrReplaceFile"],
    ["kimi_cli.tools.multiagent:Agent", "Agent"],
    ["kimi_cli.tools.agent:Agent", "Agent"],
    ["kimi_cli.tools.multiagent:Task", "Agent"],
    ["kimi_cli.tools.dmail:SendDMail", "SendDMail"],
    ["kimi_cli.tools.plan.enter:EnterPlanMode", "EnterPlanMode"],
    ["kimi_cli.tools.web:FetchURL", "FetchURL"],
    ["Glob", "Glob"],
    ["other_pkg.tools:Thing", "other_pkg.tools:Thing"],
    ["https://example.com/tool.ts", "https://example.com/tool.ts"],
  ];
  for (const [ref, name] of cases) assertEquals(normalizeToolRef(ref), name, ref);
  assertEquals(normalizeToolRef("./tools/x.ts", "/a/b/agent.yaml"), "/a/b/tools/x.ts");
  assertEquals(normalizeToolRef("../x.js", "/a/b/agent.yaml"), "/a/x.js");
  assertEquals(normalizeToolRef("lib/y.ts", "/a/b/agent.yaml"), "/a/b/lib/y.ts");
  assertEquals(normalizeToolRef("/abs/z.ts", "/a/b/agent.yaml"), "/abs/z.ts");
});

Deno.test("reference-style paths in a YAML file: effective tools use our names", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "a.yaml");
    await Deno.writeTextFile(
      file,
      [
        "version: 1",
        "agent:",
        "  extend: default",
        "  tools:",
        "    - kimi_cli.tools.multiagent:Agent",
        "    - kimi_cli.tools.dmail:SendDMail",
        "    - kimi_cli.tools.shell:Shell",
        "    - ./my_tool.ts",
        "  exclude_tools: [kimi_cli.tools.shell:Shell]",
      ].join("\n"),
    );
    const spec = await loadAgentSpec({ file });
    assertEquals(spec.tools, ["Agent", "SendDMail", join(dir, "my_tool.ts")]);
  });
});

async function expectError(yaml: string, message: string | RegExp, name = "a.yaml") {
  await withTempDir(async (dir) => {
    const file = join(dir, name);
    await Deno.writeTextFile(file, yaml.replaceAll("<dir>", dir));
    await assertRejects(
      () => loadAgentSpec({ file }),
      typeof message === "string"
        ? { name: "AgentSpecError", message: message.replaceAll("<dir>", dir) }
        : message,
    );
  });
}

Deno.test("errors: unsupported version", async () => {
  await expectError("version: 2\nagent:\n  extend: default\n", "Unsupported agent spec version: 2");
  await expectError("version: '1.1'\nagent: {}\n", "Unsupported agent spec version: 1.1");
});

Deno.test("errors: required fields after resolution", async () => {
  await expectError(
    "version: 1\nagent:\n  system_prompt_path: ./p.md\n  tools: []\n",
    "Agent name is required",
  );
  await expectError(
    "version: 1\nagent:\n  name: x\n  tools: []\n",
    "System prompt path is required",
  );
  await expectError(
    "version: 1\nagent:\n  name: x\n  system_prompt_path: ./p.md\n",
    "Tools are required",
  );
  await expectError("version: 1\n", "Agent name is required");
});

Deno.test("errors: missing spec file, missing base, missing prompt file", async () => {
  await withTempDir(async (dir) => {
    const missing = join(dir, "nope", "agent.yaml");
    await assertRejects(() => loadAgentSpec({ file: missing }), {
      name: "AgentSpecError",
      message: `Agent spec file not found: ${missing}`,
    });
  });
  await expectError(
    "version: 1\nagent:\n  extend: ./base.yaml\n",
    "Agent spec file not found: <dir>/base.yaml",
  );
  await expectError(
    "version: 1\nagent:\n  name: x\n  system_prompt_path: ./p.md\n  tools: []\n",
    "System prompt file not found: <dir>/p.md",
  );
});

Deno.test("errors: invalid YAML, non-mapping, bad field types", async () => {
  await expectError(
    "version: 1\nagent: [unclosed\n",
    /^AgentSpecError: Invalid YAML in agent spec file: .+/,
  );
  await withTempDir(async (dir) => {
    const file = join(dir, "bad.yaml");
    await Deno.writeTextFile(file, "version: 1\nagent:\n  name: x\n    bad: indent\n");
    const err = await loadAgentSpec({ file }).catch((e) => e);
    assert(err instanceof AgentSpecError);
    assert(err.message.startsWith("Invalid YAML in agent spec file: "), err.message);
    assert(err.message.endsWith(`(${file})`), err.message);
  });
  await expectError("- a\n- b\n", "Agent spec file must contain a mapping: <dir>/a.yaml");
  await expectError(
    "version: 1\nagent:\n  name: x\n  tools: Shell\n",
    /^AgentSpecError: Invalid agent spec file .*a\.yaml: agent\.tools: /,
  );
});

Deno.test("errors: cyclic extend and unknown built-in", async () => {
  await expectError(
    "version: 1\nagent:\n  extend: ./a.yaml\n",
    "Cyclic agent extend chain detected at <dir>/a.yaml",
  );
  await assertRejects(() => loadAgentSpec({ builtin: "nope" }), {
    name: "AgentSpecError",
    message: "Unknown built-in agent: nope (available: default, okabe)",
  });
});

Deno.test("agent spec: a binary or garbled file is named in a short message, never quoted whole", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const binary = `${dir}/binary.yaml`;
    const bytes = new Uint8Array(20000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    await Deno.writeFile(binary, bytes);
    let err: unknown;
    try {
      await loadAgentSpec({ file: binary });
    } catch (e) {
      err = e;
    }
    assertEquals(
      (err as Error).message,
      `Agent spec file is not a text file (it holds binary data): ${binary}`,
    );
    // A parse error quoting a huge token is cut to a short, escaped excerpt.
    const garbled = `${dir}/garbled.yaml`;
    await Deno.writeTextFile(
      garbled,
      "agent:\n  name: x\n" + '"\u0007' + "z".repeat(30000) + '"\n  bad',
    );
    try {
      await loadAgentSpec({ file: garbled });
      err = null;
    } catch (e) {
      err = e;
    }
    const message = (err as Error).message;
    assert(message.startsWith("Invalid YAML in agent spec file: "), message);
    assert(message.length < 400, `${message.length} chars`);
    assert(!message.includes("\u0007"), "control characters are escaped");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
