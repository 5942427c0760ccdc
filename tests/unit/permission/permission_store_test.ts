import { parse as parseTomlRaw } from "smol-toml";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { appendRules, removeRule } from "../../../lib/permission/config_edit.ts";
import { PermissionRuleSet } from "../../../lib/permission/rule_set.ts";
import { ApprovalRuntime, ApprovalState, type SessionGrant } from "../../../lib/soul/approval.ts";
import type { ApprovalSource } from "../../../lib/soul/approval.ts";
import { approvalChoices } from "../../../lib/wire/approval_options.ts";
import { isRequest, type PendingRequest } from "../../../lib/wire/messages.ts";

/** Parsed TOML as plain objects. */
const parseToml = (text: string): any => JSON.parse(JSON.stringify(parseTomlRaw(text)));

const SOURCE: ApprovalSource = { kind: "foreground_turn", id: "turn-1" };

Deno.test("config edit: appending and removing rules keeps comments and formatting", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/config.toml`;
    const original = [
      "# top comment",
      'default_model = "m"  # trailing comment',
      "",
      "[models.m]",
      'provider = "p"',
      'model = "x"',
      "max_context_size = 1000",
      "",
    ].join("\n");
    await Deno.writeTextFile(file, original);
    await appendRules(file, [
      { pattern: "Shell(git status *)", decision: "allow" },
      { pattern: 'Shell(echo "a\\b")', decision: "deny" },
    ]);
    const text = await Deno.readTextFile(file);
    assert(text.startsWith(original), text);
    const doc = parseToml(text) as any;
    assertEquals(doc.permission.rules, [
      { pattern: "Shell(git status *)", decision: "allow" },
      { pattern: 'Shell(echo "a\\b")', decision: "deny" },
    ]);
    assertEquals(doc.models.m.max_context_size, 1000);
    assertEquals(await removeRule(file, 0, "Shell(git status *)"), true);
    const after = await Deno.readTextFile(file);
    assert(after.startsWith(original), after);
    assertEquals((parseToml(after) as any).permission.rules, [
      { pattern: 'Shell(echo "a\\b")', decision: "deny" },
    ]);
    // The entry changed behind us: nothing is removed.
    assertEquals(await removeRule(file, 0, "Shell(other)"), false);
    // Inline rules cannot be edited as text: the file is rewritten from its data.
    await Deno.writeTextFile(
      file,
      '[permission]\nrules = [{ pattern = "Shell(ls *)", decision = "allow" }]\n',
    );
    await appendRules(file, [{ pattern: "TaskStop", decision: "ask" }]);
    assertEquals((parseToml(await Deno.readTextFile(file)) as any).permission.rules, [
      { pattern: "Shell(ls *)", decision: "allow" },
      { pattern: "TaskStop", decision: "ask" },
    ]);
    // JSON config files are rewritten as JSON.
    const json = `${dir}/config.json`;
    await Deno.writeTextFile(json, '{"default_model": ""}');
    await appendRules(json, [{ pattern: "mcp:fs:*", decision: "deny" }]);
    assertEquals(JSON.parse(await Deno.readTextFile(json)), {
      default_model: "",
      permission: { rules: [{ pattern: "mcp:fs:*", decision: "deny" }] },
    });
    assertEquals((await Deno.stat(json)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function nextRequest(
  sub: AsyncIterator<unknown>,
): Promise<PendingRequest<"ApprovalRequest">> {
  while (true) {
    const r = await sub.next();
    const msg = r.value as PendingRequest<"ApprovalRequest">;
    if (isRequest(msg as never)) return msg;
  }
}

Deno.test("approval runtime: a session grant approves waiting requests it covers, not others; undo revokes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const persisted: SessionGrant[][] = [];
    const state = new ApprovalState({
      persist: (s) => (persisted.push(s.session_rules), Promise.resolve()),
    });
    let checkpoint = 4;
    const runtime = new ApprovalRuntime(state, {
      rules: await PermissionRuleSet.load({ userFile: `${dir}/config.toml`, workDir: dir }),
      ruleContext: { workDir: dir, home: null },
      checkpoint: () => checkpoint,
    });
    const sub = runtime.subscribe()[Symbol.asyncIterator]();
    const ask = (command: string, id: string) =>
      runtime.request({
        sender: "Shell",
        toolCallId: id,
        source: SOURCE,
        ask: {
          action: "run command",
          description: command,
          display: [],
          subject: { kind: "shell", command },
        },
      });
    const a = ask("git status", "a");
    const reqA = await nextRequest(sub);
    assertEquals(reqA.payload.grant_patterns, ["Shell(git status *)"]);
    assertEquals(reqA.payload.rule_file, `${dir}/config.toml`);
    assertEquals(
      approvalChoices(reqA.payload).map((c) => [c.id, c.kind]),
      [
        ["approve", "allow_once"],
        ["approve_for_session", "allow_session"],
        ["approve_always", "allow_always"],
        ["reject", "reject_once"],
      ],
    );
    const b = ask("git status --short", "b");
    const reqB = await nextRequest(sub);
    const c = ask("git push", "c");
    await nextRequest(sub);
    reqA.resolve({ request_id: reqA.payload.id, response: "approve_for_session", feedback: "" });
    assertEquals(await a, { approved: true });
    assertEquals(await b, { approved: true }); // covered by the grant, answered without the user
    assert(reqB.settled);
    assertEquals(runtime.pending().map((p) => p.payload.tool_call_id), ["c"]);
    runtime.cancelSource(SOURCE.id);
    assertEquals(await c, { approved: false, feedback: "" });
    assertEquals(persisted.at(-1), [{ pattern: "Shell(git status *)", checkpoint: 4 }]);

    // A grant from a later turn goes; the older one stays.
    checkpoint = 9;
    await runtime.grantForSession(["Shell(ls *)"]);
    assertEquals(await state.revokeSince(7), ["Shell(ls *)"]);
    assertEquals(state.grants.map((g) => g.pattern), ["Shell(git status *)"]);
    assertEquals(await state.revokeSince(3), ["Shell(git status *)"]);
    assertEquals(state.grants, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("approval runtime: deny rules hold in yolo; unparsable lines are refused in yolo when deny rules exist", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/config.toml`,
      '[[permission.rules]]\npattern = "Shell(rm *)"\ndecision = "deny"\nreason = "use trash"\n',
    );
    const runtime = new ApprovalRuntime(new ApprovalState({ yolo: true }), {
      rules: await PermissionRuleSet.load({ userFile: `${dir}/config.toml`, workDir: dir }),
      ruleContext: { workDir: dir, home: null },
    });
    const run = (command: string) =>
      runtime.request({
        sender: "Shell",
        toolCallId: "t",
        source: SOURCE,
        ask: {
          action: "run command",
          description: "",
          display: [],
          subject: { kind: "shell", command },
        },
      });
    assertEquals(await run("ls"), { approved: true });
    const denied = await run("ls; rm -r x");
    assert(!denied.approved && denied.denial?.rule === "Shell(rm *)");
    assert(!denied.approved && denied.denial!.message.includes("Reason: use trash"));
    const unparsable = await run("echo 'open");
    // A line the parser cannot read could run anything: every Shell deny rule refuses it.
    assert(!unparsable.approved && unparsable.denial?.rule === "Shell(rm *)");
    assert(!unparsable.approved && unparsable.denial!.message.includes("does not parse"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rule set: --config text rules load without a file; 'always' then falls back to a session grant", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const rules = await PermissionRuleSet.load({
      userFile: null,
      inlinePermission: { rules: [{ pattern: "Shell(ls *)", decision: "allow" }, { pattern: 3 }] },
      workDir: dir,
    });
    assertEquals(rules.user.map((r) => [r.pattern, r.source]), [["Shell(ls *)", "--config"]]);
    assertEquals(rules.problems.map((p) => p.message), [
      "rule 2 has no `pattern` string; ignored",
    ]);
    const state = new ApprovalState();
    const runtime = new ApprovalRuntime(state, {
      rules,
      ruleContext: { workDir: dir, home: null },
    });
    const sub = runtime.subscribe()[Symbol.asyncIterator]();
    const outcome = runtime.request({
      sender: "Shell",
      toolCallId: "t",
      source: SOURCE,
      ask: {
        action: "run command",
        description: "",
        display: [],
        subject: { kind: "shell", command: "pwd" },
      },
    });
    const req = await nextRequest(sub);
    assertEquals(req.payload.rule_file, null);
    assertEquals(req.payload.options.map((o) => o.id), [
      "approve",
      "approve_for_session",
      "reject",
    ]);
    req.resolve({ request_id: req.payload.id, response: "approve_always", feedback: "" });
    assertEquals(await outcome, { approved: true });
    assertEquals(state.grants.map((g) => g.pattern), ["Shell(pwd *)"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("approval runtime: a deny rule added while the question waits wins over the answer", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const runtime = new ApprovalRuntime(new ApprovalState(), {
      rules: await PermissionRuleSet.load({ userFile: `${dir}/config.toml`, workDir: dir }),
      ruleContext: { workDir: dir, home: null },
    });
    const sub = runtime.subscribe()[Symbol.asyncIterator]();
    const outcome = runtime.request({
      sender: "Shell",
      toolCallId: "t",
      source: SOURCE,
      ask: {
        action: "run command",
        description: "",
        display: [],
        subject: { kind: "shell", command: "make deploy" },
      },
    });
    const req = await nextRequest(sub);
    await runtime.rules.save([{ pattern: "Shell(make deploy*)", decision: "deny" }]);
    req.resolve({ request_id: req.payload.id, response: "approve", feedback: "" });
    const o = await outcome;
    assert(!o.approved && o.denial?.rule === "Shell(make deploy*)");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
