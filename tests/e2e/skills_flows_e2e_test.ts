import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox } from "../helpers/kimi_process.ts";
import { spawnWire } from "../helpers/wire_process.ts";
import { INVALID_CHOICE_SUFFIX, RALPH_DECISION_SUFFIX } from "../../lib/soul/flow_runner.ts";

const DECISION_TAIL = "\n\nReply with a choice using <choice>...</choice>.";

async function writeSkill(sb: KimiSandbox, name: string, text: string): Promise<string> {
  const dir = `${sb.workDir}/.kimi/skills/${name}`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/SKILL.md`, text);
  return `${dir}/SKILL.md`;
}

async function sessionFiles(sb: KimiSandbox) {
  const [dir] = await sb.sessionDirs();
  const lines = async (f: string) =>
    (await Deno.readTextFile(`${dir}/${f}`)).trim().split("\n").map((l) => JSON.parse(l));
  const context = await lines("context.jsonl");
  const wire = (await lines("wire.jsonl")).slice(1).map((r) =>
    r.message as {
      type: string;
      payload: any;
    }
  );
  return { context, wire };
}

const turnInputs = (wire: Array<{ type: string; payload: any }>) =>
  wire.filter((m) => m.type === "TurnBegin").map((m) => m.payload.user_input);

/** TurnBegin/TurnEnd nesting as a string like `[[][]]`. */
const nesting = (wire: Array<{ type: string }>) =>
  wire.flatMap((m) => m.type === "TurnBegin" ? ["["] : m.type === "TurnEnd" ? ["]"] : []).join("");

Deno.test("/skill:x extra sends the whole SKILL.md plus the request; listed in the system prompt", async () => {
  const sb = await kimiSandbox();
  try {
    const skillText = "---\nname: x\ndescription: Do x things\n---\n\n# X\n\nStep one.\n";
    const path = await writeSkill(sb, "x", skillText);
    const config = await sb.scriptedConfig(["text: done"]);
    const r = await sb.run(["--print", "--config-file", config, "-p", "/skill:x  extra words "]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const { context, wire } = await sessionFiles(sb);
    const users = context.filter((m) => m.role === "user");
    assertEquals(users.length, 1);
    assertEquals(users[0].content, skillText.trim() + "\n\nUser request:\nextra words");
    const prompt = context.find((m) => m.role === "_system_prompt").content as string;
    assertStringIncludes(
      prompt,
      `### Project\n- x\n  - Path: ${path}\n  - Description: Do x things`,
    );
    assertStringIncludes(prompt, "### Built-in\n- kimi-cli-help\n");
    assertEquals(turnInputs(wire), ["/skill:x  extra words"]);
    assertEquals(nesting(wire), "[]");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("/flow:f runs task and decision nodes as nested turns; an invalid choice re-prompts", async () => {
  const sb = await kimiSandbox();
  try {
    await writeSkill(
      sb,
      "f",
      "---\nname: f\ndescription: A flow\ntype: flow\n---\n\n```mermaid\nflowchart TD\n" +
        "A([BEGIN]) --> B[Say hello]\nB --> C{Done?}\nC -->|yes| D([END])\nC -->|no| B\n```\n",
    );
    const config = await sb.scriptedConfig([
      "text: hello",
      "text: <choice>maybe</choice>",
      "text: <choice>no</choice>",
      "text: hello again",
      "text: <choice>no</choice> <choice>yes</choice>",
    ]);
    const r = await sb.run(["--print", "--config-file", config, "-p", "/flow:f"]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const { context, wire } = await sessionFiles(sb);
    const decision = "Done?\n\nAvailable branches:\n- yes\n- no" + DECISION_TAIL;
    assertEquals(turnInputs(wire), [
      "/flow:f",
      "Say hello",
      decision,
      decision + INVALID_CHOICE_SUFFIX,
      "Say hello",
      decision,
    ]);
    assertEquals(nesting(wire), "[[][][][][]]");
    assertEquals(
      context.filter((m) => m.role === "user").map((m) => m.content),
      turnInputs(wire).slice(1),
    );

    // Arguments are not supported: nothing runs.
    const again = await sb.scriptedConfig(["text: never"]);
    const r2 = await sb.run(["--print", "--continue", "--config-file", again, "-p", "/flow:f now"]);
    assertEquals(r2.code, 0, r2.stdout + r2.stderr);
    const after = await sessionFiles(sb);
    assertEquals(turnInputs(after.wire).slice(6), ["/flow:f now"]);
    assertEquals(after.context.length, context.length);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("Ralph loop: stops on <choice>STOP</choice> after three decisions", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      "text: working",
      "text: <choice>CONTINUE</choice>",
      "text: <choice>CONTINUE</choice>",
      "text: all done <choice>STOP</choice>",
      "text: never reached",
    ]);
    const r = await sb.run([
      "--print",
      "--max-ralph-iterations",
      "5",
      "--config-file",
      config,
      "-p",
      "Fix the tests",
    ]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const { wire } = await sessionFiles(sb);
    const r2 = "Fix the tests" + RALPH_DECISION_SUFFIX +
      "\n\nAvailable branches:\n- CONTINUE\n- STOP" + DECISION_TAIL;
    assertEquals(
      r2,
      "Fix the tests. (You are running in an automated loop where the same prompt is fed " +
        "repeatedly. Only choose STOP when the task is fully complete. Including it will stop " +
        "further iterations. If you are not 100% sure, choose CONTINUE.)\n\nAvailable branches:" +
        "\n- CONTINUE\n- STOP\n\nReply with a choice using <choice>...</choice>.",
    );
    assertEquals(turnInputs(wire), ["Fix the tests", "Fix the tests", r2, r2, r2]);
    assertEquals(nesting(wire), "[[][][][]]");
    assertEquals(wire.map((m) => m.type).slice(0, 7), [
      "TurnBegin",
      "TurnBegin",
      "StepBegin",
      "ContentPart",
      "StatusUpdate",
      "TurnEnd",
      "TurnBegin",
    ]);
    assert(!r.stdout.includes("never reached"));
  } finally {
    await sb.cleanup();
  }
});

Deno.test("Ralph loop from config: hitting the iteration limit fails the run", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(
      ["text: a", "text: <choice>CONTINUE</choice>", "text: <choice>CONTINUE</choice>"],
      { loop_control: { max_ralph_iterations: 1 } },
    );
    const r = await sb.run(["--print", "--config-file", config, "-p", "Go"]);
    assertEquals(r.code, 1, r.stdout + r.stderr);
    assertStringIncludes(r.stdout, "Max number of steps reached: 2\n");
    const { wire } = await sessionFiles(sb);
    assertEquals(turnInputs(wire).length, 3);
    assertEquals(nesting(wire), "[[][]]");

    // --max-ralph-iterations 0 overrides the config: a plain turn.
    const plain = await sb.scriptedConfig(["text: once"], {
      loop_control: { max_ralph_iterations: 3 },
    });
    const sessionId = (await sb.sessionDirs())[0].split("/").pop()!;
    const r0 = await sb.run([
      "--print",
      "--session",
      sessionId,
      "--max-ralph-iterations",
      "0",
      "--config-file",
      plain,
      "-p",
      "Again",
    ]);
    assertEquals(r0.code, 0, r0.stdout + r0.stderr);
    assertEquals(nesting((await sessionFiles(sb)).wire), "[[][]][]");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire initialize lists skill:* (built-ins included) then flow:* after the soul commands", async () => {
  const sb = await kimiSandbox();
  try {
    await writeSkill(
      sb,
      "f",
      "---\ndescription: A flow\ntype: flow\n---\n```d2\na: BEGIN\nb: END\na -> b\n```\n",
    );
    await writeSkill(sb, "plain", "Plain skill body line");
    const config = await sb.scriptedConfig([]);
    const wire = spawnWire(sb, ["--config-file", config]);
    try {
      const { response } = await wire.call("init", "initialize", { protocol_version: "1.10" });
      const names: string[] = response.result.slash_commands.map((c: { name: string }) => c.name);
      const i = names.indexOf("skill:f");
      assert(i > names.indexOf("import"), names.join(","));
      assertEquals(names.slice(i), [
        "skill:f",
        "skill:kimi-cli-help",
        "skill:plain",
        "skill:skill-creator",
        "flow:f",
      ]);
      const plain = response.result.slash_commands.find((c: { name: string }) =>
        c.name === "skill:plain"
      );
      assertEquals(plain, {
        name: "skill:plain",
        description: "Plain skill body line",
        aliases: [],
      });
    } finally {
      await wire.finish();
    }
  } finally {
    await sb.cleanup();
  }
});
