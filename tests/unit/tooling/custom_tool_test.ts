/**
 * Custom tools as TypeScript modules: an agent spec listing `./my_tool.ts` gets the module's
 * `tool` factory loaded by dynamic import; broken modules fail with an error naming them.
 */
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../../helpers/kimi_process.ts";
import { makeToolEnv } from "../../helpers/tool_env.ts";
import { CustomToolError, loadCustomTool } from "../../../lib/tooling/custom_tool.ts";
import { loadAgentTools } from "../../../lib/app/tool_loading.ts";

/** The CustomToolError `fn` rejects with (fails when it resolves or rejects otherwise). */
async function loadError(fn: () => Promise<unknown>): Promise<CustomToolError> {
  try {
    await fn();
  } catch (e) {
    assert(e instanceof CustomToolError, String(e));
    return e;
  }
  throw new Error("expected a CustomToolError");
}

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

const GOOD_TOOL = `import * as z from "zod";

export const tool = (env) => ({
  name: "Shout",
  description: "Upper-case a text.",
  parameters: z.object({ text: z.string() }),
  call: async ({ text }) => ({
    is_error: false,
    output: text.toUpperCase() + " from " + (env.isRoot ? "root" : "sub"),
    message: "Shouted.",
    display: [],
  }),
});
`;

const AGENT_YAML = (tool: string) =>
  `version: 1
agent:
  extend: default
  name: custom
  tools: ["ReadFile", "${tool}"]
`;

Deno.test("custom tool module: the model calls it through main.ts", async () => {
  const sb = await kimiSandbox();
  try {
    const agentDir = `${sb.root}/agent`;
    await Deno.mkdir(agentDir);
    await Deno.writeTextFile(`${agentDir}/my_tool.ts`, GOOD_TOOL);
    await Deno.writeTextFile(`${agentDir}/agent.yaml`, AGENT_YAML("./my_tool.ts"));
    const config = await sb.scriptedConfig([
      toolCallLine("tc-1", "Shout", { text: "hello" }),
      "text: done",
    ]);
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "--agent-file",
      `${agentDir}/agent.yaml`,
      "-p",
      "shout",
    ]);
    assertEquals(r.code, 0, r.stderr);
    const tool = jsonLines(r.stdout).find((m) => m.role === "tool");
    assertEquals(tool, {
      role: "tool",
      content: [
        { type: "text", text: "<system>Shouted.</system>" },
        { type: "text", text: "HELLO from root" },
      ],
      tool_call_id: "tc-1",
    });
  } finally {
    await sb.cleanup();
  }
});

Deno.test("custom tool module: a broken module stops startup with an error naming it", async () => {
  const sb = await kimiSandbox();
  try {
    const agentDir = `${sb.root}/agent`;
    await Deno.mkdir(agentDir);
    await Deno.writeTextFile(`${agentDir}/broken.ts`, "export const tool = ;\n");
    await Deno.writeTextFile(`${agentDir}/agent.yaml`, AGENT_YAML("./broken.ts"));
    const config = await sb.scriptedConfig(["text: never"]);
    const r = await sb.run([
      "--print",
      "--config-file",
      config,
      "--agent-file",
      `${agentDir}/agent.yaml`,
      "-p",
      "x",
    ]);
    assertEquals(r.code, 1);
    assertStringIncludes(
      r.stderr,
      `Cannot load custom tool module ${agentDir}/broken.ts:`,
    );
    assert(!r.stderr.includes("    at "), r.stderr); // reported, not a stack trace
  } finally {
    await sb.cleanup();
  }
});

Deno.test("custom tool module: missing export, bad tool, missing file, no read permission", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi-custom-tool-" }));
  try {
    const env = makeToolEnv({ workDir: dir });
    await Deno.writeTextFile(`${dir}/default_only.ts`, "export default () => null;\n");
    const e1 = await loadError(() => loadCustomTool(`${dir}/default_only.ts`, env));
    assertStringIncludes(
      e1.message,
      `Cannot load custom tool module ${dir}/default_only.ts: the module has no \`tool\` export`,
    );

    await Deno.writeTextFile(`${dir}/bad.ts`, "export const tool = () => ({ name: 'Bad' });\n");
    assertStringIncludes(
      (await loadError(() => loadCustomTool(`${dir}/bad.ts`, env))).message,
      `Cannot load custom tool module ${dir}/bad.ts: tool Bad: \`description\` must be a string`,
    );

    await Deno.writeTextFile(
      `${dir}/throws.ts`,
      "export const tool = () => { throw new Error('boom'); };\n",
    );
    assertStringIncludes(
      (await loadError(() => loadCustomTool(`${dir}/throws.ts`, env))).message,
      `Cannot load custom tool module ${dir}/throws.ts: the \`tool\` factory threw: boom`,
    );

    await Deno.writeTextFile(`${dir}/nulled.ts`, "export const tool = () => null;\n");
    assertEquals(await loadCustomTool(`${dir}/nulled.ts`, env), null);

    const e2 = await loadError(() => loadCustomTool(`${dir}/missing.ts`, env));
    assertStringIncludes(e2.message, `Cannot load custom tool module ${dir}/missing.ts: `);

    const denyRead = {
      check: (kind: string, target?: string) =>
        kind === "read"
          ? {
            allowed: false as const,
            message:
              `Denied by the sandbox: this run may not read \`${target}\` (needs --allow-read=${target}).`,
          }
          : { allowed: true as const },
    };
    assertStringIncludes(
      (await loadError(() => loadCustomTool(`${dir}/nulled.ts`, env, { scope: denyRead }))).message,
      `Cannot load custom tool module ${dir}/nulled.ts: Denied by the sandbox: this run may not read \`${dir}/nulled.ts\``,
    );

    // Name clashes with an earlier tool are reported.
    await Deno.writeTextFile(
      `${dir}/think.ts`,
      `import * as z from "zod";
export const tool = () => ({ name: "Think", description: "d", parameters: z.object({}), call: async () => ({ is_error: false, output: "", message: "", display: [] }) });
`,
    );
    assertStringIncludes(
      (await loadError(() => loadAgentTools(["Think", `${dir}/think.ts`], env))).message,
      'its tool name "Think" is already used by another tool of this agent',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
