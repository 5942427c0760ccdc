/**
 * The processes kimi starts cannot read kimi's environment or memory through `/proc/<kimi
 * pid>` (issue 33 item 5): a `-A` Shell command, a hook command, an MCP stdio server and a
 * plugin tool each try to read `/proc/<kimi pid>/environ` and `/proc/<kimi pid>/mem` of the
 * kimi process the test started (its pid handed over in a file) and fail, while a secret set
 * on kimi appears nowhere in what they report; each still does its work. Runs as `--print`
 * with the scripted provider under full access (`-A`), where Shell is not confined: the pid
 * namespace bubblewrap gives every child process is what protects kimi here.
 */
import { join } from "node:path";
import { findBwrap, probeBwrap } from "../../lib/sandbox/bwrap.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { writeToolPlugin } from "../helpers/plugin_fixtures.ts";

const BWRAP = findBwrap();
const BWRAP_PROBLEM = BWRAP === null ? "bwrap not found on PATH" : await probeBwrap(BWRAP);
// Without a working bwrap there is no pid namespace to give: skipped on a developer machine,
// but never under CI, where the guarantee must be checked.
const SKIP = BWRAP_PROBLEM !== null && !Deno.env.get("CI");
if (SKIP) {
  console.warn(`\n!!! SKIPPING the /proc isolation tests (${BWRAP_PROBLEM})\n`);
}

const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const MCP_FIXTURE = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;

/**
 * A shell probe: reads kimi's pid from `$1/kimi.pid`, then tries kimi's `/proc` entries and
 * prints what it could read (kimi's whole environment when it can).
 */
const PROBE = `f="$1/kimi.pid"; i=0
while [ ! -s "$f" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
k=$(cat "$f")
echo "probe of $k"
if cat "/proc/$k/environ" > /dev/null 2>&1; then
  echo "environ=readable"; tr '\\000' '\\n' < "/proc/$k/environ"
else
  echo "environ=unreadable"
fi
if [ -e "/proc/$k/mem" ] && head -c 1 "/proc/$k/mem" > /dev/null 2>&1; then
  echo "mem=readable"
elif [ -e "/proc/$k/mem" ]; then
  echo "mem=present"
else
  echo "mem=absent"
fi
# As root: unmount the fresh /proc (in a mount namespace of its own, never the host's) to
# look at what lies beneath it.
unshare --mount --propagation private sh -c \
  "umount -l /proc 2> /dev/null && test -e /proc/$k/environ && echo umount-escape=visible" \
  2> /dev/null
`;

interface Line {
  role?: string;
  tool_call_id?: string;
  content?: unknown;
}

function toolResults(stdout: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    if (!line.trim().startsWith("{")) continue;
    const m = JSON.parse(line) as Line;
    if (m.role === "tool" && m.tool_call_id) out.set(m.tool_call_id, JSON.stringify(m.content));
  }
  return out;
}

async function install(sb: KimiSandbox, dir: string): Promise<void> {
  const r = await sb.run(["plugin", "install", dir]);
  assertEquals(r.code, 0, r.stderr);
}

Deno.test({
  name: "a -A Shell command, a hook, an MCP server and a plugin tool cannot read kimi's /proc",
  ignore: SKIP,
  async fn() {
    const sb = await kimiSandbox();
    const secret = `sk-proc-secret-${crypto.randomUUID()}`;
    const probe = join(sb.root, "probe.sh");
    const hookOut = join(sb.root, "hook.out");
    const pidFile = join(sb.root, "kimi.pid");
    try {
      await Deno.writeTextFile(probe, PROBE);
      await writeToolPlugin(join(sb.root, "peeker"), {
        name: "peeker",
        tools: [{
          name: "peek_plugin",
          script: `cat > /dev/null; echo plugin-ran; sh ${probe} ${sb.root}\n`,
        }],
      });
      await install(sb, join(sb.root, "peeker"));
      const config = await sb.scriptedConfig([
        toolCallLine("s1", "Shell", { command: `echo shell-ran; sh ${probe} ${sb.root}` }),
        toolCallLine("p1", "peek_plugin", {}),
        toolCallLine("m1", "peek", { pid_file: pidFile }),
        toolCallLine("m2", "ping", { text: "still-works" }),
        "text: done",
      ], {
        hooks: [{
          event: "UserPromptSubmit",
          command: `(echo hook-ran; sh ${probe} ${sb.root}) > ${hookOut} 2>&1`,
        }],
      });
      const mcp = {
        mcpServers: {
          peeker: {
            command: Deno.execPath(),
            args: ["run", "-A", "--config", DENO_JSON, "--no-lock", MCP_FIXTURE],
            env: { MCP_PEEK: "1" },
          },
        },
      };
      const r = await sb.run([
        "--print",
        "--yolo",
        "--output-format",
        "stream-json",
        "--config-file",
        config,
        "--mcp-config",
        JSON.stringify(mcp),
        "-p",
        "go",
      ], {
        env: { KIMI_API_KEY: secret, KIMI_TEST_SECRET: secret },
        onSpawn: (child) => Deno.writeTextFileSync(pidFile, String(child.pid)),
      });
      assertEquals(r.code, 0, r.stderr);
      const pid = (await Deno.readTextFile(pidFile)).trim();
      const results = toolResults(r.stdout);
      const reports: [string, string][] = [
        ["shell", results.get("s1") ?? "<no Shell result>"],
        ["plugin", results.get("p1") ?? "<no plugin result>"],
        ["mcp", results.get("m1") ?? "<no MCP result>"],
        ["hook", await Deno.readTextFile(hookOut).catch(() => "<the hook did not run>")],
      ];
      // Each ran and did its work.
      assertStringIncludes(reports[0][1], "shell-ran");
      assertStringIncludes(reports[1][1], "plugin-ran");
      assertStringIncludes(reports[2][1], "peeked");
      assertStringIncludes(reports[3][1], "hook-ran");
      assertStringIncludes(results.get("m2") ?? "<no ping result>", "pong:still-works");
      const leaks: string[] = [];
      for (const [who, text] of reports) {
        // It looked at kimi's pid and could read neither its environment nor its memory.
        if (who !== "mcp" && !text.includes(`probe of ${pid}`)) leaks.push(`${who}: no probe`);
        if (!text.includes("environ=unreadable")) leaks.push(`${who}: environ readable`);
        if (!/mem=(absent|unreadable)/.test(text)) leaks.push(`${who}: mem visible`);
        if (text.includes(secret)) leaks.push(`${who}: read kimi's secret`);
        if (text.includes("umount-escape=visible")) leaks.push(`${who}: unmounted /proc`);
      }
      assertEquals(leaks, [], reports.map(([w, t]) => `${w}: ${t}`).join("\n"));
      assert(!r.stdout.includes(secret), "the secret reached the output");
      assert(!r.stderr.includes("not isolated"), r.stderr);
    } finally {
      await sb.cleanup();
    }
  },
});

Deno.test("without bwrap: one warning names the cause and the fix, kimi info says so, and kimi keeps config secrets out of its own environment", async () => {
  const sb = await kimiSandbox();
  const configKey = `sk-config-key-${crypto.randomUUID()}`;
  const noBwrap = { KIMI_BWRAP_PATH: join(sb.root, "no-such-bwrap") };
  const probe = join(sb.root, "probe.sh");
  const pidFile = join(sb.root, "kimi.pid");
  try {
    await Deno.writeTextFile(probe, PROBE);
    const config = await sb.scriptedConfig([
      toolCallLine("s1", "Shell", { command: `sh ${probe} ${sb.root}` }),
      toolCallLine("s2", "Shell", { command: "echo second" }),
      "text: done",
    ], { hooks: [{ event: "UserPromptSubmit", command: "true" }] });
    // A provider kimi does not talk to in this run, with a key kimi reads from the config.
    const written = JSON.parse(await Deno.readTextFile(config));
    written.providers.other = {
      type: "kimi",
      base_url: "http://127.0.0.1:9/v1",
      api_key: configKey,
    };
    await Deno.writeTextFile(config, JSON.stringify(written));
    const r = await sb.run([
      "--print",
      "--yolo",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "go",
    ], {
      env: noBwrap,
      onSpawn: (child) => Deno.writeTextFileSync(pidFile, String(child.pid)),
    });
    assertEquals(r.code, 0, r.stderr);
    const warning = "kimi: the processes kimi starts (shell commands, hooks, MCP servers, plugin " +
      `tools) are not isolated from it: bubblewrap (bwrap) was not found, so they can read ` +
      "kimi's environment through /proc/<pid>/environ. Install bubblewrap (e.g. apt-get " +
      "install bubblewrap) to run them in their own pid namespace.";
    assertEquals(r.stderr.split(warning).length - 1, 1, r.stderr);
    // Unisolated, the probe reads kimi's environment: the key kimi read from its config is
    // not in it (kimi never puts a secret into its own environment).
    const shell = toolResults(r.stdout).get("s1") ?? "<no Shell result>";
    assertStringIncludes(shell, "environ=readable");
    assertStringIncludes(shell, "KIMI_BWRAP_PATH=");
    assert(!shell.includes(configKey), shell);
    assertStringIncludes(toolResults(r.stdout).get("s2") ?? "", "second");

    const info = async (env: Record<string, string>) => {
      const out = await sb.run(["info", "--json"], { env });
      assertEquals(out.code, 0, out.stderr);
      return JSON.parse(out.stdout).process_isolation;
    };
    assertEquals(await info(noBwrap), {
      isolated: false,
      bwrap: null,
      reason: "bubblewrap (bwrap) was not found: processes kimi starts can read kimi's " +
        "environment through /proc/<pid>/environ. Install bubblewrap (e.g. apt-get install " +
        "bubblewrap) to run them in their own pid namespace.",
    });
    const text = await sb.run(["info"], { env: noBwrap });
    assertStringIncludes(text.stdout, "child processes: not isolated (bubblewrap (bwrap) was not");
    if (!SKIP && BWRAP_PROBLEM === null) {
      const on = await info({});
      assertEquals([on.isolated, on.bwrap], [true, BWRAP]);
    }
  } finally {
    await sb.cleanup();
  }
});

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" })
    .output();
  assert(out.success, new TextDecoder().decode(out.stderr));
}

Deno.test({
  name:
    "a repository's git hook run while kimi collects an explore subagent's git context cannot read kimi's /proc",
  ignore: SKIP,
  async fn() {
    const sb = await kimiSandbox();
    const secret = `sk-proc-secret-${crypto.randomUUID()}`;
    const probe = join(sb.root, "probe.sh");
    const out = join(sb.root, "fsmonitor.out");
    const pidFile = join(sb.root, "kimi.pid");
    try {
      await Deno.writeTextFile(probe, PROBE);
      const wd = sb.workDir;
      await git(wd, "init", "-q", "-b", "trunk");
      await git(wd, "config", "user.email", "t@example.com");
      await git(wd, "config", "user.name", "Tester");
      await Deno.writeTextFile(`${wd}/a.txt`, "a\n");
      await git(wd, "add", "a.txt");
      await git(wd, "commit", "-q", "-m", "first commit");
      // A hostile repository: `git status` runs its fsmonitor hook.
      await git(wd, "config", "core.fsmonitor", `sh ${probe} ${sb.root} >> ${out} 2>&1; true`);
      const config = await sb.scriptedConfig([
        toolCallLine("tc-agent", "Agent", {
          description: "look around",
          prompt: "Find the entry point.",
          subagent_type: "explore",
        }),
        // long enough that the subagent is not asked to say more
        "text: Summary: the explore run inspected the repository layout, confirmed that every " +
        "module compiles, found no failing checks and changed no file. Nothing is left open, " +
        "and the parent agent can report the exploration as finished without further action.",
        "text: parent done",
      ]);
      const r = await sb.run(["--print", "--config-file", config, "-p", "go"], {
        env: { KIMI_API_KEY: secret },
        onSpawn: (child) => Deno.writeTextFileSync(pidFile, String(child.pid)),
      });
      assertEquals(r.code, 0, r.stdout + r.stderr);
      const report = await Deno.readTextFile(out).catch(() => "<the fsmonitor hook did not run>");
      const pid = (await Deno.readTextFile(pidFile)).trim();
      assertStringIncludes(report, `probe of ${pid}`);
      assertStringIncludes(report, "environ=unreadable");
      assert(/mem=(absent|unreadable)/.test(report), report);
      assert(!report.includes("umount-escape=visible"), report);
      assert(!report.includes(secret), report);
      // The context is still collected.
      const [session] = await sb.sessionDirs();
      const ids: string[] = [];
      for await (const e of Deno.readDir(`${session}/subagents`)) ids.push(e.name);
      const prompt = await Deno.readTextFile(`${session}/subagents/${ids[0]}/prompt.txt`);
      assertStringIncludes(prompt, `<git-context>\nWorking directory: ${wd}\nBranch: trunk\n`);
    } finally {
      await sb.cleanup();
    }
  },
});
