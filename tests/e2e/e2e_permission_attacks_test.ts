/**
 * Approval rules under attack, end to end through `main.ts --wire` with the scripted provider:
 * spellings that hide a denied program are refused, a line whose commands depend on what it sets
 * itself is refused, an allowed command writing the project's rules file is asked, and a session
 * grant covers exactly the approved command.
 */
import { stringify as stringifyToml } from "smol-toml";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";

const events = (lines: WireLine[]) =>
  lines.filter((l) => l.method === "event").map((l) => l.params as { type: string; payload: any });
const requests = (lines: WireLine[]) => lines.filter((l) => l.method === "request");
const toolResult = (lines: WireLine[], id: string) =>
  events(lines).find((e) => e.type === "ToolResult" && e.payload.tool_call_id === id)?.payload
    .return_value;
const shell = (id: string, command: string) => toolCallLine(id, "Shell", { command });

async function config(sb: KimiSandbox, scripts: string[]): Promise<string> {
  const json = JSON.parse(await Deno.readTextFile(await sb.scriptedConfig(scripts)));
  json.permission = {
    rules: [
      { pattern: "Shell(ls *)", decision: "allow" },
      { pattern: "Shell(echo *)", decision: "allow" },
      { pattern: "Shell(git status *)", decision: "allow" },
      { pattern: "Shell(tee *)", decision: "allow" },
      { pattern: "Shell(touch *)", decision: "deny" },
      { pattern: "Shell(rm *)", decision: "deny" },
    ],
  };
  const path = `${sb.root}/config.toml`;
  await Deno.writeTextFile(path, stringifyToml(json));
  return path;
}

Deno.test("attacks e2e: hidden spellings of a denied program are refused without asking", async () => {
  const sb = await kimiSandbox();
  try {
    const attacks = [
      "$'\\x74ouch' pwned1",
      "/usr/bin/touch pwned2",
      "LC_ALL=C touch pwned3",
      "bash -c -- 'touch pwned4'",
      "echo 'touch pwned5' | sh",
      "env -S 'touch pwned6'",
      "$(printf tou)ch pwned7",
      "x='a[$(touch pwned8)]'; echo $((x))",
      "for PATH in /tmp; do ls; done",
      "find . -maxdepth 0 -exec touch pwned9 \\;",
    ];
    const cfg = await config(sb, [
      ...attacks.map((a, i) => shell(`tc-${i}`, a)),
      "text: all refused",
    ]);
    const wire = spawnWire(sb, ["--config-file", cfg]);
    await wire.call("init", "initialize", { protocol_version: "1.10" });
    const r = await wire.call("p-1", "prompt", { user_input: "attack" }, () => {
      throw new Error("a refused call must not ask");
    });
    assertEquals(requests(r.lines), []);
    attacks.forEach((a, i) => {
      const rv = toolResult(r.lines, `tc-${i}`);
      assertEquals(rv?.is_error, true, a);
      assertStringIncludes(rv.message, "The tool call was refused by the permission rule", a);
    });
    for (const entry of Deno.readDirSync(sb.workDir)) {
      assert(!entry.name.startsWith("pwned"), `${entry.name} was created`);
    }
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("attacks e2e: an allowed command writing the rules file asks with no grant; grants are exact", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.mkdir(`${sb.workDir}/.kimi`);
    await Deno.writeTextFile(`${sb.workDir}/.kimi/config.toml`, "# project rules\n");
    await Deno.writeTextFile(`${sb.workDir}/a.md`, "a\n");
    const cfg = await config(sb, [
      // (A rejected call ends its turn: no text follows it.)
      shell("tc-1", "echo '[permission]' | tee .kimi/config.toml"),
      shell("tc-2", "bash -c 'ls *.md'"),
      "text: granted",
      shell("tc-3", "bash -c 'ls *.md'"),
      "text: covered",
      shell("tc-4", "bash -c 'ls a.md'"),
    ]);
    const wire = spawnWire(sb, ["--config-file", cfg]);
    await wire.call("init", "initialize", { protocol_version: "1.11" });
    const first = await wire.call("p-1", "prompt", { user_input: "a" }, (msg) => ({
      request_id: msg.params.payload.id,
      response: "reject",
    }));
    const [req] = requests(first.lines);
    assertEquals(req.params.payload.grant_patterns, []);
    assert(
      req.params.payload.display.some((d: { text?: string }) =>
        d.text?.startsWith("No rule or grant may approve this:") &&
        d.text.includes(".kimi/config.toml")
      ),
      JSON.stringify(req.params.payload.display),
    );
    assertEquals(await Deno.readTextFile(`${sb.workDir}/.kimi/config.toml`), "# project rules\n");

    const second = await wire.call("p-2", "prompt", { user_input: "b" }, (msg) => ({
      request_id: msg.params.payload.id,
      response: "approve_for_session",
    }));
    const [grantReq] = requests(second.lines);
    assertEquals(grantReq.params.payload.grant_patterns, ["Shell(bash -c 'ls \\*.md')"]);
    assertEquals(
      grantReq.params.payload.options[1].label,
      "Approve exactly `bash -c 'ls *.md'` for this session",
    );
    assertEquals(toolResult(second.lines, "tc-2").output, "a.md\n");
    const third = await wire.call("p-3", "prompt", { user_input: "c" }, () => {
      throw new Error("the grant covers this exact command");
    });
    assertEquals(toolResult(third.lines, "tc-3").output, "a.md\n");
    const fourth = await wire.call("p-4", "prompt", { user_input: "d" }, (msg) => ({
      request_id: msg.params.payload.id,
      response: "reject",
    }));
    assertEquals(requests(fourth.lines).length, 1);
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});
