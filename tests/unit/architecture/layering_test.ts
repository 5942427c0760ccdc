import {
  forbiddenEdges,
  importCycles,
  type ImportEdge,
  type ImportGraph,
  importSpecifiers,
  type LayerRule,
  readImportGraph,
  REPO_ROOT,
} from "../../helpers/import_graph.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";

/** Modules above the soul: front ends, the CLI and the composition root. */
const ABOVE_SOUL = /^lib\/(ui|cli|app)\//;

/**
 * The stages of the composition root (`lib/app/kimi_app.ts`), in the order `KimiApp.create`
 * calls them: a stage reads only the stages before it, and none reads the app.
 */
const STAGES = ["model_stage", "policy_stage", "soul_stage", "tool_env_stage"] as const;

/** One rule per stage: it imports no later stage and not the app that calls them. */
const STAGE_RULES: readonly LayerRule[] = STAGES.map((stage, i) => ({
  name: `the ${stage} stage imports a later stage or the app`,
  from: new RegExp(`^lib/app/${stage}\\.ts$`),
  to: new RegExp(`^lib/app/(${[...STAGES.slice(i + 1), "kimi_app"].join("|")})\\.ts$`),
}));

/** The import rules of the layer diagram in the README ("Architecture"). */
const RULES: readonly LayerRule[] = [
  { name: "soul imports a UI, the CLI or the app", from: /^lib\/soul\//, to: ABOVE_SOUL },
  {
    name: "soul imports tools or the subagent service (the app wires them in)",
    from: /^lib\/soul\//,
    to: /^(tools\/|lib\/subagents\/)/,
  },
  {
    name: "llm/wire imports the soul or anything above it",
    from: /^lib\/(llm|wire)\//,
    to: /^(lib\/(soul|subagents|ui|cli|app)\/|tools\/)/,
  },
  {
    name: "tools reach the soul other than through lib/tooling",
    from: /^tools\//,
    to: /^lib\/(soul|subagents|ui|cli|app)\//,
  },
  {
    name: "lib/tooling imports what it describes",
    from: /^lib\/tooling\//,
    to: /^(lib\/(soul|subagents|ui|cli|app)\/|tools\/)/,
  },
  {
    name: "the subagent service imports a UI, the CLI or the app",
    from: /^lib\/subagents\//,
    to: ABOVE_SOUL,
  },
  { name: "the app imports a UI or the CLI", from: /^lib\/app\//, to: /^lib\/(ui|cli)\// },
  { name: "a UI imports the CLI", from: /^lib\/ui\//, to: /^lib\/cli\// },
  {
    name: "a service below the soul imports the soul or above",
    from:
      /^lib\/(config|session|fs|llm|wire|tooling|permission|mcp|hooks|sandbox|search|web|process|background|agent|skills|flows|assets|plugins)\//,
    to: /^lib\/(soul|subagents|ui|cli|app)\//,
  },
  {
    name: "program code imports scripts or tests",
    from: /^(lib\/|tools\/|main\.ts|mod\.ts)/,
    to: /^(scripts|tests)\//,
  },
  ...STAGE_RULES,
];

function graphOf(edges: Record<string, string[]>): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const [from, tos] of Object.entries(edges)) {
    graph.set(from, tos.map((to): ImportEdge => ({ from, to, kind: "static" })));
    for (const to of tos) if (!graph.has(to) && !(to in edges)) graph.set(to, []);
  }
  return graph;
}

Deno.test("layering: the program's import graph breaks no layer rule and has no cycle", async () => {
  const graph = await readImportGraph(REPO_ROOT, ["main.ts", "mod.ts", "lib", "tools"]);
  // Sanity: the reader sees the whole tree, lazily imported UIs and providers included.
  assert(graph.size > 150, `only ${graph.size} modules read`);
  const lazy = [...graph.values()].flat().filter((e) => e.kind === "dynamic").map((e) => e.to);
  assert(lazy.includes("lib/ui/shell/shell_ui.ts"), "dynamic import of the shell UI not seen");
  assert(
    lazy.includes("lib/llm/providers/openai_chat.ts"),
    "dynamic import of a provider not seen",
  );
  for (const edges of graph.values()) {
    for (const e of edges) assert(graph.has(e.to), `${e.from} imports missing module ${e.to}`);
  }
  assertEquals(forbiddenEdges(graph, RULES), []);
  assertEquals(importCycles(graph), []);
});

Deno.test("layering: scripts and tests have no import cycle", async () => {
  const graph = await readImportGraph(REPO_ROOT, ["scripts", "tests"]);
  assert(graph.size > 50);
  assertEquals(importCycles(graph), []);
});

Deno.test("layering: the reader finds static, type-only and dynamic specifiers", () => {
  const source = `/**
 * @example
 * import { x } from "./from_a_doc_comment.ts";
 */
import { a } from "./a.ts";
import type { B } from "../b.ts";
export { c } from "./c.ts";
export * from "./d.ts";
import "./side_effect.ts";
import * as z from "zod";
const e = await import("./e.ts");
const f: typeof import("./f_type.ts") = await import("./f.ts");
// import { h } from "./commented_out.ts";
const glob = "src/**/*.ts";
`;
  assertEquals(importSpecifiers(source), [
    { spec: "./a.ts", kind: "static" },
    { spec: "../b.ts", kind: "static" },
    { spec: "./c.ts", kind: "static" },
    { spec: "./d.ts", kind: "static" },
    { spec: "./side_effect.ts", kind: "static" },
    { spec: "./e.ts", kind: "dynamic" },
    { spec: "./f_type.ts", kind: "dynamic" },
    { spec: "./f.ts", kind: "dynamic" },
  ]);
});

Deno.test("layering: an added back-edge is reported (soul → ui, llm → soul, tools → soul, lib → tests)", () => {
  const clean = graphOf({
    "lib/cli/main.ts": ["lib/ui/shell/shell_ui.ts"],
    "lib/ui/shell/shell_ui.ts": ["lib/app/kimi_app.ts", "lib/soul/soul.ts"],
    "lib/app/kimi_app.ts": ["lib/soul/soul.ts", "tools/registry.ts", "lib/subagents/service.ts"],
    "lib/subagents/service.ts": ["lib/soul/soul.ts", "lib/tooling/tool.ts"],
    "lib/soul/soul.ts": ["lib/llm/provider.ts", "lib/wire/messages.ts", "lib/tooling/tool.ts"],
    "tools/registry.ts": ["tools/shell.ts"],
    "tools/shell.ts": ["lib/tooling/tool.ts"],
  });
  assertEquals(forbiddenEdges(clean, RULES), []);
  assertEquals(importCycles(clean), []);

  const add = (from: string, to: string, kind: ImportEdge["kind"] = "dynamic"): string[] => {
    const graph = graphOf({});
    for (const [k, v] of clean) graph.set(k, [...v]);
    graph.set(from, [...(graph.get(from) ?? []), { from, to, kind }]);
    return forbiddenEdges(graph, RULES);
  };
  assertEquals(add("lib/soul/soul.ts", "lib/ui/shell/shell_ui.ts"), [
    "soul imports a UI, the CLI or the app: lib/soul/soul.ts → lib/ui/shell/shell_ui.ts (dynamic)",
  ]);
  assertEquals(add("lib/soul/soul.ts", "lib/app/kimi_app.ts", "static"), [
    "soul imports a UI, the CLI or the app: lib/soul/soul.ts → lib/app/kimi_app.ts (static)",
  ]);
  assertEquals(add("lib/llm/provider.ts", "lib/soul/soul.ts").length, 2);
  assert(
    add("lib/wire/messages.ts", "lib/soul/soul.ts")[0].startsWith("llm/wire imports the soul"),
  );
  assert(add("tools/shell.ts", "lib/soul/soul.ts")[0].startsWith("tools reach the soul"));
  assert(add("lib/soul/soul.ts", "tools/shell.ts")[0].startsWith("soul imports tools"));
  assert(add("lib/soul/soul.ts", "lib/subagents/service.ts")[0].startsWith("soul imports tools"));
  assert(add("lib/tooling/tool.ts", "lib/subagents/service.ts")[0].startsWith("lib/tooling"));
  assert(add("lib/soul/soul.ts", "tests/helpers/x.ts")[0].startsWith("program code imports"));
  assert(add("lib/app/kimi_app.ts", "scripts/bench/run.ts")[0].startsWith("program code imports"));
});

Deno.test("layering: the app's stages exist, are called by the app, and import only earlier ones", async () => {
  const graph = await readImportGraph(REPO_ROOT, ["lib/app"]);
  const app = (graph.get("lib/app/kimi_app.ts") ?? []).map((e) => e.to);
  for (const stage of STAGES) {
    assert(graph.has(`lib/app/${stage}.ts`), `lib/app/${stage}.ts is missing`);
    assert(app.includes(`lib/app/${stage}.ts`), `kimi_app.ts does not build ${stage}`);
  }
  assertEquals(forbiddenEdges(graph, STAGE_RULES), []);
  // The rules can fail: a back-edge from an earlier stage to a later one is reported.
  const back = new Map(graph);
  back.set("lib/app/policy_stage.ts", [
    ...(graph.get("lib/app/policy_stage.ts") ?? []),
    { from: "lib/app/policy_stage.ts", to: "lib/app/soul_stage.ts", kind: "static" },
  ]);
  assertEquals(forbiddenEdges(back, STAGE_RULES), [
    "the policy_stage stage imports a later stage or the app: lib/app/policy_stage.ts → " +
    "lib/app/soul_stage.ts (static)",
  ]);
  const toApp = new Map(graph);
  toApp.set("lib/app/model_stage.ts", [
    { from: "lib/app/model_stage.ts", to: "lib/app/kimi_app.ts", kind: "dynamic" },
  ]);
  assertEquals(forbiddenEdges(toApp, STAGE_RULES).length, 1);
});

Deno.test("layering: an added cycle is reported, however it is imported", () => {
  const graph = graphOf({
    "lib/soul/soul.ts": ["lib/soul/slash_commands.ts", "lib/soul/turn.ts"],
    "lib/soul/slash_commands.ts": ["lib/soul/turn.ts"],
    "lib/soul/flow_runner.ts": ["lib/soul/turn.ts"],
    "lib/soul/turn.ts": [],
  });
  assertEquals(importCycles(graph), []);
  graph.get("lib/soul/turn.ts")!.push({
    from: "lib/soul/turn.ts",
    to: "lib/soul/soul.ts",
    kind: "dynamic",
  });
  assertEquals(importCycles(graph), [[
    "lib/soul/slash_commands.ts",
    "lib/soul/soul.ts",
    "lib/soul/turn.ts",
  ]]);
  graph.get("lib/soul/flow_runner.ts")!.push({
    from: "lib/soul/flow_runner.ts",
    to: "lib/soul/flow_runner.ts",
    kind: "static",
  });
  assertEquals(importCycles(graph).length, 2);
});
