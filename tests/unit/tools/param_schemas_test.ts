/**
 * The built-in tools' parameter JSON Schemas are precomputed (`tools/param_schemas.gen.ts`,
 * written by `deno task embed`): the generated module matches its generator, every built-in
 * tool carries its schema, and what the toolset sends is exactly the conversion of the tool's
 * zod schema at run time (same keys, same order), so a changed parameter schema without
 * regenerating fails here.
 *
 * @module
 */
import * as z from "zod";
import { toolJsonSchema } from "../../../lib/soul/toolset.ts";
import type { GoalService } from "../../../lib/tooling/goal_service.ts";
import type { SubagentService } from "../../../lib/tooling/subagent_service.ts";
import type { Tool } from "../../../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "../../../tools/param_schemas.gen.ts";
import { BUILTIN_TOOLS } from "../../../tools/registry.ts";
import { PARAM_SCHEMAS_FILE, renderParamSchemas } from "../../../scripts/param_schemas.ts";
import { assert, assertEquals, assertStrictEquals } from "../../helpers/assert.ts";
import { makeToolEnv } from "../../helpers/tool_env.ts";

const STALE = "run `deno task embed`";

const notCalled = (): never => {
  throw new Error("not called by a schema test");
};

/** Every built-in tool, built for a root agent that has every optional service. */
async function everyBuiltinTool(): Promise<Map<string, Tool>> {
  const env = makeToolEnv({
    workDir: "/tmp",
    capabilities: ["image_in", "video_in"],
    services: {
      moonshotSearch: { baseUrl: "http://127.0.0.1:1/search", apiKey: "k", customHeaders: {} },
      moonshotFetch: null,
    },
    subagents: { types: () => Promise.resolve([]) } as Partial<SubagentService> as never,
    goals: {} as GoalService,
    planControl: { set: notCalled, autoApprove: () => false, readPlan: notCalled },
    dmail: { send: notCalled },
  });
  const tools = new Map<string, Tool>();
  for (const [name, load] of Object.entries(BUILTIN_TOOLS)) {
    const tool = await (await load())(env);
    assert(tool, `${name} built no tool`);
    tools.set(name, tool);
  }
  return tools;
}

/** The run-time conversion, spelled out: input side, unrepresentable as `{}`, no `$schema`. */
function freshSchema(tool: Tool): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.parameters, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  delete schema.$schema;
  return schema;
}

Deno.test("param schemas: the generated module is up to date with its generator", async () => {
  const actual = await Deno.readTextFile(
    new URL(`../../../${PARAM_SCHEMAS_FILE}`, import.meta.url),
  );
  assertEquals(actual, await renderParamSchemas(), STALE);
});

Deno.test("param schemas: every built-in tool sends its precomputed schema", async () => {
  const tools = await everyBuiltinTool();
  assertEquals(Object.keys(PARAM_JSON_SCHEMAS).sort(), [...tools.keys()].sort(), STALE);
  for (const [name, tool] of tools) {
    assertEquals(tool.name, name);
    // No conversion at run time: the toolset sends the generated object itself.
    assert(tool.jsonSchema, `${name} has no precomputed jsonSchema`);
    assertStrictEquals(tool.jsonSchema, PARAM_JSON_SCHEMAS[name], `${name}: wrong table entry`);
    assertStrictEquals(toolJsonSchema(tool), PARAM_JSON_SCHEMAS[name]);
  }
});

Deno.test("param schemas: each equals the run-time conversion of the tool's zod schema", async () => {
  for (const [name, tool] of await everyBuiltinTool()) {
    const fresh = freshSchema(tool);
    const sent = toolJsonSchema(tool);
    // As objects (a readable diff), then as the request's bytes (key order included; the
    // conversion may hold `undefined` values, which JSON leaves out as the request does).
    assertEquals(sent, JSON.parse(JSON.stringify(fresh)), `${name}: ${STALE}`);
    assertStrictEquals(JSON.stringify(sent), JSON.stringify(fresh), `${name}: ${STALE}`);
  }
});

Deno.test("param schemas: a tool without a precomputed schema is converted at run time", () => {
  const parameters = z.object({ n: z.number().int().default(1).describe("How many.") });
  const tool: Tool = {
    name: "Custom",
    description: "d",
    parameters,
    resolve: notCalled,
  };
  assertEquals(toolJsonSchema(tool), {
    type: "object",
    properties: {
      n: {
        type: "integer",
        minimum: -9007199254740991,
        maximum: 9007199254740991,
        default: 1,
        description: "How many.",
      },
    },
  });
});

Deno.test("registry: every built-in tool name loads the factory of the tool with that name", async () => {
  const { BUILTIN_FACTORIES } = await import("../../../tools/builtin_factories.ts");
  assertEquals(Object.keys(BUILTIN_TOOLS).sort(), Object.keys(BUILTIN_FACTORIES).sort());
  for (const [name, tool] of await everyBuiltinTool()) assertEquals(tool.name, name);
});
