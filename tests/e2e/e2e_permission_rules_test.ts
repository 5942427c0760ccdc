import { stringify as stringifyToml } from "smol-toml";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine, type WireProcess } from "../helpers/wire_process.ts";

const events = (lines: WireLine[]) =>
  lines.filter((l) => l.method === "event").map((l) => l.params as { type: string; payload: any });
const requests = (lines: WireLine[]) => lines.filter((l) => l.method === "request");
const toolResult = (lines: WireLine[], id: string) =>
  events(lines).find((e) => e.type === "ToolResult" && e.payload.tool_call_id === id)?.payload
    .return_value;
const shell = (id: string, command: string) => toolCallLine(id, "Shell", { command });

/** A TOML config file with a comment, the scripted provider and `rules`. */
async function tomlConfig(
  sb: KimiSandbox,
  scripts: string[],
  rules: { pattern: string; decision: string }[] = [],
): Promise<string> {
  const json = JSON.parse(await Deno.readTextFile(await sb.scriptedConfig(scripts)));
  if (rules.length) json.permission = { rules };
  const path = `${sb.root}/config.toml`;
  await Deno.writeTextFile(path, "# my kimi config: keep this comment\n" + stringifyToml(json));
  return path;
}

function init(wire: WireProcess, version = "1.11") {
  return wire.call("init", "initialize", { protocol_version: version });
}

const approve = (response: string) => (msg: WireLine) => ({
  request_id: msg.params.payload.id,
  response,
});

Deno.test("rules e2e: 'always' saves a prefix rule that approves the next matching command and asks for another", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await tomlConfig(sb, [
      shell("tc-1", "echo first"),
      "text: one",
      shell("tc-2", "echo second | cat"),
      "text: two",
      shell("tc-3", "ls -d ."),
      "text: three",
    ]);
    const wire = spawnWire(sb, ["--config-file", config]);
    await init(wire);
    const first = await wire.call("p-1", "prompt", { user_input: "a" }, approve("approve_always"));
    const [req] = requests(first.lines);
    assertEquals(req.params.payload.grant_patterns, ["Shell(echo *)"]);
    assertEquals(req.params.payload.rule_file, config);
    assertEquals(req.params.payload.options, [
      { id: "approve", label: "Approve once" },
      { id: "approve_for_session", label: "Approve `echo` commands for this session" },
      {
        id: "approve_always",
        label: `Always approve \`echo\` commands (save rule to ${config})`,
      },
      { id: "reject", label: "Reject" },
    ]);
    assertEquals(toolResult(first.lines, "tc-1").output, "first\n");
    const saved = await Deno.readTextFile(config);
    assert(saved.startsWith("# my kimi config: keep this comment\n"), saved);
    assert(
      saved.endsWith('[[permission.rules]]\npattern = "Shell(echo *)"\ndecision = "allow"\n'),
      saved,
    );

    // `echo second | cat`: echo is allowed by the rule, cat is not: the line asks for cat only.
    const second = await wire.call("p-2", "prompt", { user_input: "b" }, approve("approve"));
    assertEquals(requests(second.lines).map((r) => r.params.payload.grant_patterns), [[
      "Shell(cat *)",
    ]]);
    const third = await wire.call("p-3", "prompt", { user_input: "c" }, approve("reject"));
    assertEquals(requests(third.lines).length, 1);
    assertEquals(requests(third.lines)[0].params.payload.grant_patterns, ["Shell(ls *)"]);
    assertEquals(toolResult(third.lines, "tc-3").is_error, true);
    assertEquals((await wire.finish()).code, 0);

    // A new run (its scripts start over) reads the saved rule: `echo first` asks nothing.
    const again = spawnWire(sb, ["--config-file", config]);
    await init(again);
    const fourth = await again.call("p-4", "prompt", { user_input: "d" }, () => {
      throw new Error("no request expected: the saved rule allows echo");
    });
    assertEquals(requests(fourth.lines), []);
    assertEquals(toolResult(fourth.lines, "tc-1").output, "first\n");
    assertEquals((await again.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("rules e2e: a deny rule refuses before any approval, also in yolo; the turn goes on", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.writeTextFile(`${sb.workDir}/keep.txt`, "x");
    const config = await tomlConfig(sb, [
      shell("tc-1", "ls && rm -f keep.txt"),
      "text: denied",
      shell("tc-2", "echo ok > /dev/null"),
      "text: yolo ran",
    ], [{ pattern: "Shell(rm *)", decision: "deny" }]);
    const wire = spawnWire(sb, ["--config-file", config]);
    await init(wire);
    const r = await wire.call("p-1", "prompt", { user_input: "a" }, () => {
      throw new Error("a denied call must not ask");
    });
    assertEquals(requests(r.lines), []);
    const rv = toolResult(r.lines, "tc-1");
    assertEquals(rv.is_error, true);
    const line = (await Deno.readTextFile(config)).split("\n")
      .indexOf("[[permission.rules]]") + 1;
    assertEquals(
      rv.message,
      `The tool call was refused by the permission rule \`Shell(rm *)\` (${config}:${line}), which ` +
        "denies `rm -f keep.txt`. Do not retry it or work around the rule; choose another " +
        "approach or ask the user.",
    );
    assertEquals(rv.display, [{ type: "brief", text: "Denied by rule Shell(rm *)" }]);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/keep.txt`), "x");
    assert(events(r.lines).some((e) => e.type === "ContentPart" && e.payload.text === "denied"));
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
  const sb2 = await kimiSandbox();
  try {
    await Deno.writeTextFile(`${sb2.workDir}/keep.txt`, "x");
    const config = await tomlConfig(sb2, [shell("tc-1", "rm -f keep.txt"), "text: done"], [
      { pattern: "Shell(rm *)", decision: "deny" },
    ]);
    const out = await sb2.run([
      "--config-file",
      config,
      "--yolo",
      "--print",
      "--output-format",
      "text",
      "-p",
      "go",
    ]);
    assertEquals(out.code, 0);
    assertStringIncludes(out.stdout, "refused by the permission rule `Shell(rm *)`");
    assertEquals(await Deno.readTextFile(`${sb2.workDir}/keep.txt`), "x");
  } finally {
    await sb2.cleanup();
  }
});

Deno.test("rules e2e: project rules only narrow — an allow is reported and ignored, a deny applies", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.mkdir(`${sb.workDir}/.kimi`);
    const projectFile = `${sb.workDir}/.kimi/config.toml`;
    await Deno.writeTextFile(
      projectFile,
      [
        "[[permission.rules]]",
        'pattern = "Shell(echo *)"',
        'decision = "allow"',
        "",
        "[[permission.rules]]",
        'pattern = "Shell(cat *)"',
        'decision = "deny"',
        "",
        "[[permission.rules]]",
        'pattern = "Shell(ls"',
        'decision = "deny"',
        "",
      ].join("\n"),
    );
    const config = await tomlConfig(sb, [
      shell("tc-1", "echo hi"),
      "text: asked",
      shell("tc-2", "cat /etc/hostname"),
      "text: denied",
    ], [{ pattern: "Shell(cat *)", decision: "allow" }]);
    const wire = spawnWire(sb, ["--config-file", config]);
    await init(wire);
    const r1 = await wire.call("p-1", "prompt", { user_input: "a" }, approve("approve"));
    assertEquals(requests(r1.lines).length, 1, "a project allow must not approve");
    const r2 = await wire.call("p-2", "prompt", { user_input: "b" }, () => {
      throw new Error("the project deny must refuse without asking");
    });
    assertStringIncludes(
      toolResult(r2.lines, "tc-2").message,
      `permission rule \`Shell(cat *)\` (${projectFile}:5)`,
    );
    await wire.finish();
    const stderr = await wire.stderr;
    assertStringIncludes(
      stderr,
      `Approval rule problem in ${projectFile}:1: rule "Shell(echo *)": project rules may only ` +
        "ask or deny (a repository cannot grant itself permissions); ignored",
    );
    assertStringIncludes(
      stderr,
      `Approval rule problem in ${projectFile}:9: rule "Shell(ls": missing closing ")"`,
    );
  } finally {
    await sb.cleanup();
  }
});

Deno.test("rules e2e: the rule choices reach only clients declaring wire 1.11; old clients keep 1.10 payloads", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      shell("tc-1", "git --version"),
      "text: a",
      shell("tc-2", "git --version"),
      "text: b",
    ]);
    const oldClient = spawnWire(sb, ["--config-file", config]);
    const init10 = await init(oldClient, "1.10");
    assertEquals(init10.response.result.protocol_version, "1.10");
    const r = await oldClient.call("p-1", "prompt", { user_input: "a" }, approve("approve"));
    const payload = requests(r.lines)[0].params.payload;
    assertEquals(Object.keys(payload), [
      "id",
      "tool_call_id",
      "sender",
      "action",
      "description",
      "source_kind",
      "source_id",
      "agent_id",
      "subagent_type",
      "source_description",
      "display",
    ]);
    await oldClient.finish();

    const newClient = spawnWire(sb, ["--config-file", config]);
    await init(newClient, "1.11");
    const r2 = await newClient.call("p-2", "prompt", { user_input: "b" }, approve("approve"));
    const p2 = requests(r2.lines)[0].params.payload;
    assertEquals(p2.grant_patterns, ["Shell(git --version)"]);
    assertEquals(p2.options.map((o: { id: string }) => o.id), [
      "approve",
      "approve_for_session",
      "approve_always",
      "reject",
    ]);
    await newClient.finish();
  } finally {
    await sb.cleanup();
  }
});

Deno.test("rules e2e: a session grant covers the prefix only and is undone by /undo of its turn", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      shell("tc-1", "echo a"),
      "text: granted",
      shell("tc-2", "echo b"),
      "text: covered",
      shell("tc-3", "ls -d ."),
      "text: other",
      shell("tc-4", "echo c"),
      "text: after undo",
    ]);
    const wire = spawnWire(sb, ["--config-file", config]);
    await init(wire);
    const r1 = await wire.call(
      "p-1",
      "prompt",
      { user_input: "a" },
      approve("approve_for_session"),
    );
    assertEquals(requests(r1.lines).length, 1);
    const r2 = await wire.call("p-2", "prompt", { user_input: "b" }, () => {
      throw new Error("echo is granted for the session");
    });
    assertEquals(toolResult(r2.lines, "tc-2").output, "b\n");
    const r3 = await wire.call("p-3", "prompt", { user_input: "c" }, approve("approve"));
    assertEquals(requests(r3.lines).length, 1, "ls is not covered by the echo grant");
    const undo = await wire.call("p-4", "prompt", { user_input: "/undo 3" });
    const said = events(undo.lines).filter((e) => e.type === "ContentPart").map((e) =>
      e.payload.text
    ).join("");
    assertStringIncludes(
      said,
      "Revoked session approvals granted in those turns: `Shell(echo *)`.",
    );
    const r5 = await wire.call("p-5", "prompt", { user_input: "d" }, approve("approve"));
    assertEquals(requests(r5.lines).length, 1, "the grant was undone");
    await wire.finish();
  } finally {
    await sb.cleanup();
  }
});

Deno.test("rules e2e: kimi info shows the effective rules with their source and the bad ones", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.mkdir(sb.shareDir, { recursive: true });
    await Deno.writeTextFile(
      `${sb.shareDir}/config.toml`,
      [
        "# rules",
        "[[permission.rules]]",
        'pattern = "Shell(git status *)"',
        'decision = "allow"',
        "",
        "[[permission.rules]]",
        'pattern = "Shell(npm *)"',
        'decision = "maybe"',
        "",
      ].join("\n"),
    );
    await Deno.mkdir(`${sb.workDir}/.kimi`);
    await Deno.writeTextFile(
      `${sb.workDir}/.kimi/config.toml`,
      '[[permission.rules]]\npattern = "WriteFile(secrets/**)"\ndecision = "deny"\n',
    );
    const text = await sb.run(["info"]);
    assertEquals(text.code, 0);
    assertStringIncludes(
      text.stdout,
      "approval rules (deny wins over ask, ask over allow):\n" +
        `  allow Shell(git status *)  (${sb.shareDir}/config.toml:2)\n` +
        `  deny  WriteFile(secrets/**)  (${sb.workDir}/.kimi/config.toml:1)\n` +
        `approval rule problem: ${sb.shareDir}/config.toml:6: rule "Shell(npm *)": unknown ` +
        'decision "maybe" (use "allow", "ask" or "deny"); ignored',
    );
    const json = JSON.parse((await sb.run(["info", "--json"])).stdout);
    assertEquals(json.permission_rules, [
      {
        pattern: "Shell(git status *)",
        decision: "allow",
        scope: "user",
        source: `${sb.shareDir}/config.toml`,
        line: 2,
      },
      {
        pattern: "WriteFile(secrets/**)",
        decision: "deny",
        scope: "project",
        source: `${sb.workDir}/.kimi/config.toml`,
        line: 1,
      },
    ]);
    assertEquals(json.permission_problems.length, 1);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("rules e2e: reads are checked against deny and ask rules only", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.writeTextFile(`${sb.workDir}/secret.txt`, "hunter2");
    await Deno.mkdir(`${sb.workDir}/docs`);
    await Deno.writeTextFile(`${sb.workDir}/docs/a.md`, "doc");
    await Deno.writeTextFile(`${sb.workDir}/free.txt`, "free");
    const read = (id: string, path: string) => toolCallLine(id, "ReadFile", { path });
    const config = await tomlConfig(sb, [
      read("tc-1", "secret.txt"),
      "text: one",
      read("tc-2", "docs/a.md"),
      "text: two",
      read("tc-3", "free.txt"),
      "text: three",
    ], [
      { pattern: "Read(secret*)", decision: "deny" },
      { pattern: "ReadFile(docs/**)", decision: "ask" },
    ]);
    const wire = spawnWire(sb, ["--config-file", config]);
    await init(wire);
    const r1 = await wire.call("p-1", "prompt", { user_input: "a" }, () => {
      throw new Error("a denied read must not ask");
    });
    const rv1 = toolResult(r1.lines, "tc-1");
    assertEquals(rv1.is_error, true);
    assertStringIncludes(rv1.message, "which denies reading `" + sb.workDir + "/secret.txt`");
    assert(!JSON.stringify(r1.lines).includes("hunter2"));
    const r2 = await wire.call("p-2", "prompt", { user_input: "b" }, approve("approve"));
    assertEquals(requests(r2.lines).map((r) => r.params.payload.action), ["read file"]);
    assertEquals(requests(r2.lines)[0].params.payload.grant_patterns, []);
    const r3 = await wire.call("p-3", "prompt", { user_input: "c" }, () => {
      throw new Error("an unruled read asks nothing");
    });
    assertEquals(requests(r3.lines), []);
    assertEquals(toolResult(r3.lines, "tc-3").is_error, false);
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});
