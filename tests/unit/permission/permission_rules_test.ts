import { assertEquals } from "../../helpers/assert.ts";
import {
  commandMatches,
  commandPrefix,
  evaluateRules,
  type RuleContext,
} from "../../../lib/permission/evaluate.ts";
import { parseShellLine } from "../../../lib/permission/shell_parse.ts";
import {
  parseRulePattern,
  type PermissionRule,
  type RuleDecision,
  ruleLines,
  rulesFromConfig,
} from "../../../lib/permission/rules.ts";
import type { ApprovalSubject } from "../../../lib/tooling/tool.ts";

const CTX: RuleContext = { workDir: "/w", home: "/home/u" };

function rule(pattern: string, decision: RuleDecision, scope: "user" | "project" = "user") {
  const p = parseRulePattern(pattern);
  if (typeof p === "string") throw new Error(p);
  return {
    ...p,
    pattern,
    decision,
    scope,
    source: "cfg",
    line: null,
    reason: "",
    index: 0,
  } satisfies PermissionRule;
}

async function verdict(
  rules: PermissionRule[],
  subject: ApprovalSubject | string,
  sender = "Shell",
): Promise<string> {
  const s: ApprovalSubject = typeof subject === "string"
    ? { kind: "shell", command: subject }
    : subject;
  const v = await evaluateRules({ sender, subject: s, rules, ctx: CTX });
  if (v.kind === "deny") return `deny ${v.rule.pattern} ${v.what}`;
  if (v.kind === "allow") return "allow";
  if (v.unparsable) return `ask unparsable`;
  return `ask${v.rule ? ` rule=${v.rule.pattern}` : ""} grant=${v.grant.join("|")}`;
}

Deno.test("parseShellLine: commands and writes of quoting, pipelines, chains, substitutions, redirections", async () => {
  const golden: [string, string[], (string | null)[]][] = [
    ["git status", ["git status"], []],
    [`"git" 'status'   --short`, ["git status --short"], []],
    [`git commit -m "fix: a \\"b\\" c"`, [`git commit -m fix: a "b" c`], []],
    ["ls -la | grep foo | wc -l", ["ls -la", "grep foo", "wc -l"], []],
    ["make && make test || echo failed; echo done", [
      "make",
      "make test",
      "echo failed",
      "echo done",
    ], []],
    ["(cd sub && rm -rf build)", ["cd sub", "rm -rf build"], []],
    ["{ echo a; echo b; } > out.txt", ["echo a", "echo b"], ["out.txt"]],
    ["echo $(rm -rf /)", ["echo $(rm -rf /)", "rm -rf /"], []],
    ["echo `whoami`", ["echo `whoami`", "whoami"], []],
    ["diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"], []],
    ["npm test > log.txt 2>&1", ["npm test"], ["log.txt"]],
    ["cmd >> 'my file.txt'", ["cmd"], ["my file.txt"]],
    ["cmd &> all.log", ["cmd"], ["all.log"]],
    ["cmd > /dev/null 2> /dev/null", ["cmd"], []],
    ["echo x > $OUT", ["echo x"], [null]],
    ["cat < in.txt", ["cat"], []],
    ["FOO=1 npm test", ["FOO=1 npm test"], []],
    ["export PATH=/x:$PATH", ["export PATH=/x:$PATH"], []],
    ['for f in *.txt; do rm "$f"; done', ['rm "$f"'], []],
    ["f() { rm -rf /; }; f", ["rm -rf /", "f"], []],
    ["if test -f x; then cat x; fi", ["test -f x", "cat x"], []],
    ["ls \\\n  -la", ["ls -la"], []],
  ];
  for (const [line, commands, writes] of golden) {
    const parsed = await parseShellLine(line);
    if (!parsed.ok) throw new Error(`${line}: ${parsed.reason}`);
    assertEquals(parsed.commands.map((c) => c.text), commands, line);
    assertEquals(parsed.writes.map((w) => w.path), writes, line);
  }
  for (const bad of ["echo 'unterminated", "ls |", "if true; then", "echo $((1 +"]) {
    assertEquals((await parseShellLine(bad)).ok, false, bad);
  }
});

Deno.test("commandMatches: prefix and glob patterns", () => {
  const golden: [string, string, boolean][] = [
    ["git status *", "git status", true],
    ["git status *", "git status --short", true],
    ["git status *", "git statusx", false],
    ["git status*", "git statusx", true],
    ["git status*", "git status", true],
    ["git status", "git status", true],
    ["git status", "git status -s", false],
    ["git *", "git push --force", true],
    ["npm run * --silent", "npm run build --silent", true],
    ["npm run * --silent", "npm run build", false],
    ["echo *", "echo a\nb", true],
    ["rm -rf /tmp/*", "rm -rf /tmp/x", true],
    ["ls", "ls  -la", false],
    ["a.b *", "axb c", false],
  ];
  for (const [pattern, text, want] of golden) {
    assertEquals(commandMatches(pattern, text), want, `${pattern} ~ ${text}`);
  }
});

Deno.test("commandPrefix: program and subcommand; exact for wrappers and expansions", async () => {
  const golden: [string, string | null][] = [
    ["git status --short", "git status"],
    ["npm test", "npm test"],
    ["ls -la src", "ls"],
    ["cat README.md", "cat"],
    ["cargo build --release", "cargo build"],
    ["bash -c 'rm -rf /'", null],
    ["sudo apt install x", null],
    ["FOO=1 npm test", null],
    ["$CMD run", null],
    ["xargs rm", null],
    ["echo hello world", "echo"],
    ["docker compose up -d", "docker compose"],
    ["git --version", null],
  ];
  for (const [line, want] of golden) {
    const p = await parseShellLine(line);
    if (!p.ok) throw new Error(line);
    assertEquals(commandPrefix(p.commands[0]), want, line);
  }
});

Deno.test("evaluateRules: every command of a line must be allowed; deny wins; ask beats allow", async () => {
  const rules = [
    rule("Shell(git status *)", "allow"),
    rule("Shell(ls *)", "allow"),
    rule("Shell(grep *)", "allow"),
    rule("Shell(rm -rf /*)", "deny"),
    rule("Shell(git push *)", "ask"),
    rule("Shell(git *)", "allow"),
  ];
  const golden: [string, string][] = [
    ["git status", "allow"],
    ["  git   status  -s", "allow"],
    ["ls -la | grep x", "allow"],
    ["ls && git status", "allow"],
    ["ls; npm test", "ask grant=Shell(npm test *)"],
    ["ls | npm run build --prod", "ask grant=Shell(npm run *)"],
    ["git status && rm -rf /", "deny Shell(rm -rf /*) `rm -rf /`"],
    ["echo $(rm -rf /etc)", "deny Shell(rm -rf /*) `rm -rf /etc`"],
    ["(cd x; rm -rf /var)", "deny Shell(rm -rf /*) `rm -rf /var`"],
    ["git push origin main", "ask rule=Shell(git push *) grant="],
    ["git push && npm test", "ask rule=Shell(git push *) grant=Shell(npm test *)"],
    ["git log", "allow"],
    ["ls > listing.txt", "ask grant=Edit(listing.txt)"],
    ["ls > /dev/null", "allow"],
    [
      "echo 'unterminated",
      "deny Shell(rm -rf /*) `rm -rf /*`, and this line could run it: what it runs cannot be " +
      "told before it runs (the line does not parse: the command line has a syntax error)",
    ],
  ];
  for (const [line, want] of golden) assertEquals(await verdict(rules, line), want, line);
  // Without a Shell deny rule, a line that does not parse is asked.
  assertEquals(await verdict([rule("Shell(ls *)", "allow")], "ls 'x"), "ask unparsable");
  // A deny rule still refuses an unparsable line that names it.
  assertEquals(
    await verdict([rule("Shell(*rm -rf*)", "deny")], "rm -rf / 'x"),
    "deny Shell(*rm -rf*) `rm -rf / 'x`",
  );
});

Deno.test("evaluateRules: deny and ask rules see through wrappers and shell -c code", async () => {
  const rules = [
    rule("Shell(rm *)", "deny"),
    rule("Shell(git push *)", "ask"),
    rule("Edit(/etc/**)", "deny"),
    rule("Shell(sudo *)", "allow"),
    rule("Shell(bash *)", "allow"),
    rule("Shell(git *)", "allow"),
  ];
  const golden: [string, string][] = [
    ["sudo rm -rf /x", "deny Shell(rm *) `rm -rf /x`"],
    ["sudo -u root rm x", "deny Shell(rm *) `rm x`"],
    ["env A=1 B=2 rm x", "deny Shell(rm *) `rm x`"],
    ["timeout -s KILL 5 rm x", "deny Shell(rm *) `rm x`"],
    ["nice -n 5 nohup rm x", "deny Shell(rm *) `rm x`"],
    ["find . | xargs -n 1 rm", "deny Shell(rm *) `rm`"],
    ["time rm x", "deny Shell(rm *) `rm x`"],
    ['bash -c "ls && rm -rf /"', "deny Shell(rm *) `rm -rf /`"],
    [`sh -c 'bash -c "rm x"'`, "deny Shell(rm *) `rm x`"],
    ["eval 'rm x'", "deny Shell(rm *) `rm x`"],
    ["bash -c 'echo > /etc/hosts'", "deny Edit(/etc/**) writing `/etc/hosts`"],
    ["sudo git push", "ask rule=Shell(git push *) grant="],
    ["git rm file", "allow"],
    ["sudo ls", "allow"],
    ["bash -c 'ls -la'", "allow"],
    [
      `bash -c "echo 'open"`,
      "deny Shell(rm *) `rm *`, and this line could run it: what it runs cannot be told before " +
      "it runs (the line does not parse: the code run by `bash` does not parse)",
    ],
  ];
  for (const [line, want] of golden) assertEquals(await verdict(rules, line), want, line);
});

Deno.test("evaluateRules: redirections are file writes checked against Edit/WriteFile rules", async () => {
  const rules = [
    rule("Shell(echo *)", "allow"),
    rule("Edit(logs/**)", "allow"),
    rule("WriteFile(/etc/**)", "deny"),
    rule("Edit(~/.ssh/**)", "deny"),
  ];
  assertEquals(await verdict(rules, "echo hi > logs/a/b.txt"), "allow");
  assertEquals(await verdict(rules, "echo hi >> logs/x.txt"), "allow");
  assertEquals(await verdict(rules, "echo hi > notes.txt"), "ask grant=Edit(notes.txt)");
  assertEquals(
    await verdict(rules, "echo hi > /etc/passwd"),
    "deny WriteFile(/etc/**) writing `/etc/passwd`",
  );
  assertEquals(
    await verdict(rules, "echo k >> ~/.ssh/authorized_keys"),
    "deny Edit(~/.ssh/**) writing `/home/u/.ssh/authorized_keys`",
  );
  assertEquals(await verdict(rules, "echo k > ../w/logs/ok.txt"), "allow");
  assertEquals(await verdict(rules, "echo k > $TARGET"), "ask unparsable");
  // The rule files themselves are never allowed by a rule: changing them always asks.
  const guarded = { ...CTX, protectedPaths: ["/home/u/.kimi/config.toml"] };
  for (
    const [sender, subject] of [
      ["Shell", { kind: "shell", command: "echo x >> ~/.kimi/config.toml" }],
      ["WriteFile", { kind: "file", path: "/home/u/.kimi/config.toml" }],
    ] as const
  ) {
    const v = await evaluateRules({
      sender,
      subject,
      rules: [rule("Shell", "allow"), rule("Edit(/home/**)", "allow")],
      ctx: guarded,
    });
    assertEquals(v.kind === "ask" ? v.grant : v.kind, [], sender);
  }
  // A bare Shell allow covers the whole line, redirections included.
  assertEquals(await verdict([rule("Shell", "allow")], "anything > out.txt"), "allow");
});

Deno.test("evaluateRules: file tools match path globs; grants name the folder", async () => {
  const rules = [
    rule("WriteFile(src/**)", "allow"),
    rule("Edit(**/*.lock)", "deny"),
    rule("StrReplaceFile(/tmp/*)", "allow"),
  ];
  const file = (path: string): ApprovalSubject => ({ kind: "file", path });
  assertEquals(await verdict(rules, file("/w/src/a/b.ts"), "WriteFile"), "allow");
  assertEquals(
    await verdict(rules, file("/w/src/a/b.ts"), "StrReplaceFile"),
    "ask grant=Edit(src/a/*)",
  );
  assertEquals(
    await verdict(rules, file("/w/deno.lock"), "WriteFile"),
    "deny Edit(**/*.lock) writing `/w/deno.lock`",
  );
  assertEquals(await verdict(rules, file("/tmp/x"), "StrReplaceFile"), "allow");
  assertEquals(await verdict(rules, file("/w/README.md"), "WriteFile"), "ask grant=Edit(*)");
  assertEquals(await verdict(rules, file("/other/x.ts"), "WriteFile"), "ask grant=Edit(/other/*)");
  // Relative globs never match outside the work dir.
  assertEquals(
    await verdict([rule("WriteFile(**)", "allow")], file("/w2/x"), "WriteFile"),
    "ask grant=Edit(/w2/*)",
  );
});

Deno.test("evaluateRules: read rules match ReadFile/ReadMediaFile and the Read alias, not Edit", async () => {
  const rules = [
    rule("Read(**/.env*)", "deny"),
    rule("ReadFile(docs/**)", "ask"),
    rule("Edit(**)", "allow"),
  ];
  const read = (path: string): ApprovalSubject => ({ kind: "file", path, access: "read" });
  assertEquals(
    await verdict(rules, read("/w/app/.env.local"), "ReadFile"),
    "deny Read(**/.env*) reading `/w/app/.env.local`",
  );
  assertEquals(
    await verdict(rules, read("/w/docs/a.md"), "ReadFile"),
    "ask rule=ReadFile(docs/**) grant=",
  );
  assertEquals(
    await verdict(rules, read("/w/docs/a.png"), "ReadMediaFile"),
    "ask grant=",
  );
});

Deno.test("evaluateRules: MCP tools as mcp:server:tool, other tools by name", async () => {
  const rules = [rule("mcp:github:get_*", "allow"), rule("mcp:github:delete_repo", "deny")];
  const mcp = (tool: string): ApprovalSubject => ({ kind: "mcp", server: "github", tool });
  assertEquals(await verdict(rules, mcp("get_issue"), "get_issue"), "allow");
  assertEquals(
    await verdict(rules, mcp("delete_repo"), "delete_repo"),
    "deny mcp:github:delete_repo `mcp:github:delete_repo`",
  );
  assertEquals(
    await verdict(rules, mcp("create_issue"), "create_issue"),
    "ask grant=mcp:github:create_issue",
  );
  assertEquals(await verdict([rule("TaskStop", "allow")], { kind: "tool" }, "TaskStop"), "allow");
  assertEquals(await verdict([], { kind: "tool" }, "TaskStop"), "ask grant=TaskStop");
});

Deno.test("rulesFromConfig: bad rules are reported with their line and left out; project allow refused", () => {
  const text = [
    "# my rules",
    "[[permission.rules]]",
    'pattern = "Shell(git status *)"',
    'decision = "allow"',
    "",
    "[[permission.rules]]",
    'pattern = "Shell(git log"',
    'decision = "allow"',
    "",
    "[[permission.rules]]",
    'pattern = "Shell(ls *)"',
    'decision = "always"',
    "",
    "[[permission.rules]]",
    'pattern = "mcp:fs:*"',
    'decision = "deny"',
    'reason = "no fs"',
  ].join("\n");
  const data = {
    rules: [
      { pattern: "Shell(git status *)", decision: "allow" },
      { pattern: "Shell(git log", decision: "allow" },
      { pattern: "Shell(ls *)", decision: "always" },
      { pattern: "mcp:fs:*", decision: "deny", reason: "no fs" },
    ],
  };
  assertEquals(ruleLines(text), [2, 6, 10, 14]);
  const user = rulesFromConfig(data, { scope: "user", source: "/c.toml", text });
  assertEquals(user.rules.map((r) => [r.pattern, r.decision, r.line, r.index]), [
    ["Shell(git status *)", "allow", 2, 0],
    ["mcp:fs:*", "deny", 14, 3],
  ]);
  assertEquals(user.rules[1].reason, "no fs");
  assertEquals(user.problems, [
    {
      source: "/c.toml",
      line: 6,
      message: 'rule "Shell(git log": missing closing ")" in "Shell(git log"; ignored',
    },
    {
      source: "/c.toml",
      line: 10,
      message:
        'rule "Shell(ls *)": unknown decision "always" (use "allow", "ask" or "deny"); ignored',
    },
  ]);
  const project = rulesFromConfig(data, { scope: "project", source: "/p.toml", text });
  assertEquals(project.rules.map((r) => r.pattern), ["mcp:fs:*"]);
  assertEquals(
    project.problems[0].message,
    'rule "Shell(git status *)": project rules may only ask or deny (a repository cannot ' +
      "grant itself permissions); ignored",
  );
  assertEquals(rulesFromConfig({ rules: "x" }, { scope: "user", source: "f" }).problems.length, 1);
  assertEquals(typeof parseRulePattern("Shell()"), "string");
  assertEquals(typeof parseRulePattern("git status"), "string");
  assertEquals(parseRulePattern("Shell"), { tool: "Shell", arg: null });
  // kimi-code's `Bash` is this program's `Shell`.
  const alias = rulesFromConfig({ rules: [{ pattern: "Bash(rm *)", decision: "deny" }] }, {
    scope: "user",
    source: "f",
  });
  assertEquals([alias.rules[0].tool, alias.rules[0].arg], ["Shell", "rm *"]);
});

Deno.test("evaluateRules: a redirection through a planted symlink is checked at its target", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.mkdir(`${root}/work`);
    await Deno.mkdir(`${root}/home`);
    await Deno.writeTextFile(`${root}/home/.bashrc`, "");
    await Deno.symlink(`${root}/home/.bashrc`, `${root}/work/notes.txt`);
    const ctx = { workDir: `${root}/work`, home: `${root}/home` };
    const rules = [rule("Shell(echo *)", "allow"), rule("Edit(*)", "allow")];
    const v = await evaluateRules({
      sender: "Shell",
      subject: { kind: "shell", command: "echo evil >> notes.txt" },
      rules: [...rules, rule("Edit(~/.bashrc)", "deny")],
      ctx,
    });
    assertEquals(v.kind === "deny" ? v.what : v.kind, `writing \`${root}/home/.bashrc\``);
    const asked = await evaluateRules({
      sender: "Shell",
      subject: { kind: "shell", command: "echo evil >> notes.txt" },
      rules,
      ctx,
    });
    assertEquals(asked.kind === "ask" ? asked.grant : asked.kind, [
      `Edit(${root}/home/.bashrc)`,
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
