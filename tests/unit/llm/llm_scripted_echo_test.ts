import { assert, assertEquals, assertRejects, assertThrows } from "../../helpers/assert.ts";
import { APIConnectionError, APIStatusError, ChatProviderError } from "../../../lib/llm/errors.ts";
import { createScriptedEchoProvider } from "../../../lib/llm/providers/scripted_echo.ts";
import type { ChatProvider, ChatRequest, StreamPart } from "../../../lib/llm/provider.ts";

const REQUEST: ChatRequest = { systemPrompt: "s", tools: [], history: [] };

async function collect(p: ChatProvider): Promise<{ parts: StreamPart[]; id: string | null }> {
  const stream = await p.generate(REQUEST);
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return { parts, id: stream.id };
}

async function withScriptFile(
  content: string,
  fn: (path: string, dir: string) => Promise<void> | void,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "scripted_echo_" });
  try {
    const path = `${dir}/scripts.txt`;
    await Deno.writeTextFile(path, content);
    await fn(path, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const envOf = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("scripted echo: JSON array file, one script per generate, then exhaustion", async () => {
  await withScriptFile(JSON.stringify(["id: a\ntext: one", "text: two"]), async (path) => {
    const p = createScriptedEchoProvider({ getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: path }) });
    assertEquals([p.name, p.modelName, p.thinkingEffort], ["scripted_echo", "scripted_echo", null]);
    assertEquals(await collect(p), { parts: [{ type: "text", text: "one" }], id: "a" });
    assertEquals(await collect(p), { parts: [{ type: "text", text: "two" }], id: null });
    await assertRejects(() => p.generate(REQUEST), {
      name: "ChatProviderError",
      message: "ScriptedEchoChatProvider exhausted at turn 3.",
    });
  });
});

Deno.test("scripted echo: text file split on ---, chunks trimmed, empties dropped", async () => {
  const text = "text: first\n---\n\n  text: second  \n\n---\n   \n---\ntext: third\n";
  await withScriptFile(text, async (path) => {
    const p = createScriptedEchoProvider({ getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: path }) });
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { parts } = await collect(p);
      texts.push((parts[0] as { text: string }).text);
    }
    assertEquals(texts, ["first", "second", "third"]);
    await assertRejects(() => p.generate(REQUEST), {
      message: "ScriptedEchoChatProvider exhausted at turn 4.",
    });
  });
});

Deno.test("scripted echo: trace line per turn as a JSON string", async () => {
  await withScriptFile(JSON.stringify(['text: "héllo"\nid: x', "text: b"]), async (path) => {
    for (const flag of ["1", "TRUE", "yes", "on"]) {
      const lines: string[] = [];
      const p = createScriptedEchoProvider({
        getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: path, KIMI_SCRIPTED_ECHO_TRACE: flag }),
        writeStdout: (l) => lines.push(l),
      });
      await collect(p);
      await collect(p);
      assertEquals(lines, [
        'SCRIPTED_ECHO TURN 1: "text: \\"h\\u00e9llo\\"\\nid: x"',
        'SCRIPTED_ECHO TURN 2: "text: b"',
      ]);
    }
    const lines: string[] = [];
    const off = createScriptedEchoProvider({
      getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: path, KIMI_SCRIPTED_ECHO_TRACE: "0" }),
      writeStdout: (l) => lines.push(l),
    });
    await collect(off);
    assertEquals(lines, []);
  });
});

Deno.test("scripted echo: withThinking shares the queue and turn counter", async () => {
  await withScriptFile(JSON.stringify(["text: 1", "text: 2", "text: 3"]), async (path) => {
    const lines: string[] = [];
    const p = createScriptedEchoProvider({
      getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: path, KIMI_SCRIPTED_ECHO_TRACE: "1" }),
      writeStdout: (l) => lines.push(l),
    });
    const live = p.withThinking("high");
    assert(live !== p);
    assertEquals((await collect(live)).parts, [{ type: "text", text: "1" }]);
    assertEquals((await collect(p)).parts, [{ type: "text", text: "2" }]);
    assertEquals((await collect(live.withThinking("off"))).parts, [{ type: "text", text: "3" }]);
    assertEquals(lines, [
      'SCRIPTED_ECHO TURN 1: "text: 1"',
      'SCRIPTED_ECHO TURN 2: "text: 2"',
      'SCRIPTED_ECHO TURN 3: "text: 3"',
    ]);
    await assertRejects(() => p.generate(REQUEST), {
      message: "ScriptedEchoChatProvider exhausted at turn 4.",
    });
  });
});

Deno.test("scripted echo: error scripts raise at generate and still consume a turn", async () => {
  const scripts = ["error: 429 slow down", "error: connection", "# nothing", "text: ok"];
  await withScriptFile(JSON.stringify(scripts), async (path) => {
    const p = createScriptedEchoProvider({ getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: path }) });
    await assertRejects(() => p.generate(REQUEST), (err: unknown) => {
      assert(err instanceof APIStatusError);
      assertEquals([err.statusCode, err.message], [429, "slow down"]);
      return true;
    });
    await assertRejects(() => p.generate(REQUEST), APIConnectionError);
    await assertRejects(() => p.generate(REQUEST), {
      message: "ScriptedEchoChatProvider DSL produced no streamable parts.",
    });
    assertEquals((await collect(p)).parts, [{ type: "text", text: "ok" }]);
  });
});

Deno.test("scripted echo: configuration errors", async () => {
  assertThrows(
    () => createScriptedEchoProvider({ getEnv: envOf({}) }),
    {
      name: "ChatProviderError",
      message: "KIMI_SCRIPTED_ECHO_SCRIPTS is required for _scripted_echo.",
    },
  );
  const dir = await Deno.makeTempDir();
  try {
    const missing = `${dir}/nope.json`;
    assertThrows(
      () => createScriptedEchoProvider({ getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: missing }) }),
      { message: `Scripted echo file not found: ${missing}` },
    );
    for (const bad of ['["ok", 1]', '{"a": 1}', "42"]) {
      await Deno.writeTextFile(`${dir}/bad.json`, bad);
      assertThrows(
        () =>
          createScriptedEchoProvider({
            getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: `${dir}/bad.json` }),
          }),
        { message: "Scripted echo JSON must be an array of strings." },
      );
    }
    await Deno.writeTextFile(`${dir}/empty.txt`, "\n---\n  \n");
    assertThrows(
      () =>
        createScriptedEchoProvider({
          getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: `${dir}/empty.txt` }),
        }),
      {
        message:
          "Scripted echo file must be a JSON array of strings or a text file split by '\\n---\\n'.",
      },
    );
    // `~` expands to HOME
    await Deno.writeTextFile(`${dir}/home.json`, '["text: from home"]');
    const p = createScriptedEchoProvider({
      getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: "~/home.json", HOME: dir }),
    });
    assertEquals((await collect(p)).parts, [{ type: "text", text: "from home" }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("scripted echo: invalid DSL in a script is a ChatProviderError at generate", async () => {
  await withScriptFile(JSON.stringify(["text: ok\nwhat"]), async (path) => {
    const p = createScriptedEchoProvider({ getEnv: envOf({ KIMI_SCRIPTED_ECHO_SCRIPTS: path }) });
    await assertRejects(() => p.generate(REQUEST), (err: unknown) => {
      assert(err instanceof ChatProviderError);
      assertEquals(err.message, "Invalid echo DSL at line 2: 'what'");
      return true;
    });
  });
});
