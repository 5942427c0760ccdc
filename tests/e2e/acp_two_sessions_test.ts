/**
 * One `kimi acp` process, two sessions in two work dirs, Deno's scope narrowed by hand to those
 * dirs (and the share dir), shell commands confined by bubblewrap: each session's run state is
 * its own. Its Shell writes in its own dir and not in the other's (foreground and background),
 * kimi's config stays masked in both sandboxes, a background task of one session is not listed
 * in the other, "approve for this session" granted in one does not approve in the other, and
 * the PreToolUse hook runs for each session with that session's id and work dir.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import { exists } from "../../lib/fs/exists.ts";
import { findBwrap, probeBwrap } from "../../lib/sandbox/bwrap.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { spawnAcp } from "../helpers/acp_client.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";

const BWRAP = findBwrap();
const BWRAP_PROBLEM = BWRAP === null ? "bwrap not found on PATH" : await probeBwrap(BWRAP);
const UNDER_CI = (Deno.env.get("CI") ?? "") !== "";
const NAME = "acp: two sessions in one process keep their own sandbox, approvals and tasks";
if (BWRAP_PROBLEM !== null && !UNDER_CI) {
  console.warn(`\n!!! SKIPPING "${NAME}" (${BWRAP_PROBLEM}); under CI it fails instead.\n`);
}

/** A secret only the config file holds (it must never reach a confined command). */
const CONFIG_MARKER = "sk-two-sessions-config-marker-0123456789";

/** The scripted model turns of one session: `me` works in `own`, and tries `other`. */
function sessionScripts(me: string, own: string, other: string, config: string): string[] {
  return [
    toolCallLine("g1", "Shell", { command: "echo granted" }),
    [
      toolCallLine("g2", "Shell", { command: "echo granted" }),
      toolCallLine("own", "Shell", { command: `touch own-${me} && echo own-ok-${me}` }),
      toolCallLine("intrude", "Shell", { command: `touch ${other}/intruder-${me}` }),
      toolCallLine("bg", "Shell", {
        command: `touch ${own}/bg-${me} && touch ${other}/bg-intruder-${me}; sleep 120`,
        run_in_background: true,
        description: `${me}-sleeper`,
      }),
      toolCallLine("secret", "Shell", { command: `cat ${config}; echo secret-done` }),
    ].join("\n"),
    toolCallLine("tasks", "TaskList", { active_only: true }),
    `text: done-${me}`,
  ];
}

/** Waits until `path` exists (a background task's first effect), or throws after `ms`. */
async function waitForFile(path: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await exists(path, { noFollow: true }))) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test({
  name: NAME,
  ignore: BWRAP_PROBLEM !== null && !UNDER_CI,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    assert(BWRAP_PROBLEM === null, `bubblewrap is required under CI: ${BWRAP_PROBLEM}`);
    // Outside /tmp (a private tmpfs in the sandbox), so the other session's dir is visible
    // there and the sandbox must make it read-only.
    const sb = await kimiSandbox({ dir: "/var/tmp" });
    const dirA = `${sb.root}/ws-a`;
    const dirB = `${sb.root}/ws-b`;
    await Deno.mkdir(dirA);
    await Deno.mkdir(dirB);
    const config = await sb.scriptedConfig(["text: unused"]);
    const hookDir = `${sb.root}/hooks`;
    await Deno.mkdir(hookDir);
    const scriptsA = `${sb.root}/scripts-a.json`;
    const scriptsB = `${sb.root}/scripts-b.json`;
    await Deno.writeTextFile(scriptsA, JSON.stringify(sessionScripts("a", dirA, dirB, config)));
    await Deno.writeTextFile(scriptsB, JSON.stringify(sessionScripts("b", dirB, dirA, config)));
    const provider = (scripts: string) => ({
      type: "_scripted_echo",
      base_url: "",
      api_key: CONFIG_MARKER,
      env: { KIMI_SCRIPTED_ECHO_SCRIPTS: scripts },
    });
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        default_model: "model-a",
        models: {
          "model-a": { provider: "pa", model: "scripted_echo", max_context_size: 100000 },
          "model-b": { provider: "pb", model: "scripted_echo", max_context_size: 100000 },
        },
        providers: { pa: provider(scriptsA), pb: provider(scriptsB) },
        hooks: [{
          event: "PreToolUse",
          matcher: "^Shell$",
          // one file per call: concurrent calls' hooks do not interleave
          command: `cat > "$(mktemp ${hookDir}/in-XXXXXX)"`,
        }],
      }),
    );
    const client = spawnAcp(sb, {
      rootArgs: ["--config-file", config],
      permissions: [
        "--allow-read",
        "--allow-env",
        `--allow-write=${dirA},${dirB},${sb.shareDir}`,
        "--allow-run",
      ],
    });
    try {
      await client.initialize();
      const a = (await client.newSession(dirA)).sessionId;
      const b = (await client.newSession(dirB)).sessionId;
      // Session B switches to its own script: its app is rebuilt (after A's was built), the
      // moment a process-wide sandbox would have been replaced by B's for both sessions.
      await client.agent.request("session/set_model", { sessionId: b, modelId: "model-b" });

      // "Approve for this session" for A's first command; every other request once.
      client.answerPermission = (req) =>
        req.sessionId === a && JSON.stringify(req.toolCall).includes("echo granted")
          ? "approve_for_session"
          : "approve";

      const result = (sid: string, id: string) => {
        const done = client.of(sid).filter((u) =>
          u.sessionUpdate === "tool_call_update" && u.toolCallId.endsWith(`/${id}`) &&
          (u.status === "completed" || u.status === "failed")
        ) as acp.ToolCallUpdate[];
        assertEquals(done.length, 1, `one final update for ${id} in ${sid}`);
        const text = (done[0].content ?? []).map((c) =>
          c.type === "content" && c.content.type === "text" ? c.content.text : ""
        ).join("\n");
        return { status: done[0].status, text };
      };
      const asked = (sid: string, command: string) =>
        client.permissions.filter((p) =>
          p.sessionId === sid && JSON.stringify(p.toolCall).includes(command)
        ).length;

      assertEquals(await client.prompt(a, "work in a"), { stopReason: "end_turn" });
      assertEquals(await client.prompt(b, "work in b"), { stopReason: "end_turn" });

      for (const [me, sid, own, other] of [["a", a, dirA, dirB], ["b", b, dirB, dirA]] as const) {
        // Its own dir is writable, under its own sandbox's description.
        const mine = result(sid, "own");
        assertEquals(mine.status, "completed", `${me}: ${mine.text}`);
        assertStringIncludes(mine.text, `own-ok-${me}`);
        assert(await exists(`${own}/own-${me}`, { noFollow: true }), `${me} wrote its own dir`);
        // The other session's dir is not.
        const intrude = result(sid, "intrude");
        assertEquals(intrude.status, "failed", `${me}: ${intrude.text}`);
        assertStringIncludes(intrude.text, "Read-only file system");
        assert(!(await exists(`${other}/intruder-${me}`)), `${me} wrote into the other dir`);
        // The background task runs under the same session's sandbox.
        await waitForFile(`${own}/bg-${me}`);
        assert(!(await exists(`${other}/bg-intruder-${me}`)), `${me}'s task left its sandbox`);
        // kimi's config (a control path) is masked in both sandboxes.
        const secret = result(sid, "secret");
        assertStringIncludes(secret.text, "secret-done");
        assert(!secret.text.includes(CONFIG_MARKER), `${me} read the config: ${secret.text}`);
        // TaskList lists this session's task only.
        const tasks = result(sid, "tasks").text;
        assertStringIncludes(tasks, "active_background_tasks: 1\n");
        assertStringIncludes(tasks, `description: ${me}-sleeper`);
        assert(!tasks.includes(`description: ${me === "a" ? "b" : "a"}-sleeper`), tasks);
      }

      // A granted `echo granted` for its session: asked once (g1), not again (g2). B was not
      // granted anything: asked for both.
      assertEquals(asked(a, "echo granted"), 1);
      assertEquals(asked(b, "echo granted"), 2);
      for (const sid of [a, b]) {
        assertEquals(result(sid, "g1").status, "completed");
        assertEquals(result(sid, "g2").status, "completed");
      }

      // The hook ran for every Shell call of each session, as that session (id, work dir).
      const hookInputs: { session_id: string; cwd: string }[] = [];
      for await (const e of Deno.readDir(hookDir)) {
        hookInputs.push(JSON.parse(await Deno.readTextFile(`${hookDir}/${e.name}`)));
      }
      for (const [sid, dir] of [[a, dirA], [b, dirB]]) {
        const mine = hookInputs.filter((h) => h.session_id === sid);
        assertEquals(mine.length, 6, JSON.stringify(hookInputs)); // g1, g2, own, intrude, bg, secret
        assertEquals(mine.filter((h) => h.cwd !== dir), []);
      }
      assertEquals(hookInputs.length, 12);

      // Closing A stops A's task and leaves B's running.
      await client.agent.request(acp.methods.agent.session.close, { sessionId: a });
      const { code, stderr } = await client.finish();
      assertEquals(code, 0, stderr);
      assert(!stderr.includes("not confined"), stderr);
    } finally {
      await client.finish().catch(() => {});
      await sb.cleanup();
    }
  },
});
