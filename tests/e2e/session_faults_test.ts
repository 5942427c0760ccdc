/**
 * Faults at the session files, end to end through `main.ts`: a share dir on a small tmpfs that
 * fills up mid-turn (no torn record, the error reported, the session resumable), a tool call
 * left without a result (resume answers it, so a provider that checks pairing accepts the
 * next request), and two processes on one session (the second is refused, naming the holder).
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { denoDir, type KimiSandbox, kimiSandbox, MAIN_TS } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { assertSessionFilesValid } from "../helpers/session_files.ts";

type Line = Record<string, any>;

async function contextLines(dir: string): Promise<Line[]> {
  const text = await Deno.readTextFile(`${dir}/context.jsonl`);
  return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

async function sessionDir(sb: KimiSandbox, id: string): Promise<string> {
  const dir = (await sb.sessionDirs()).find((d) => d.endsWith(`/${id}`));
  assert(dir, `session ${id} exists`);
  return dir;
}

/** Mount a tmpfs of `size` at `dir` (root only); false when this machine does not allow it. */
async function mountTmpfs(dir: string, size: string): Promise<boolean> {
  if (Deno.uid() !== 0) return false;
  await Deno.mkdir(dir, { recursive: true });
  const out = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => null);
  return out?.success === true;
}

async function umount(dir: string): Promise<void> {
  await new Deno.Command("umount", { args: [dir], stdout: "null", stderr: "null" }).output()
    .catch(() => null);
}

/** Write zeros to `path` until the file system is full. */
async function fillDisk(path: string): Promise<void> {
  const f = await Deno.open(path, { write: true, create: true });
  const chunk = new Uint8Array(64 * 1024);
  try {
    for (;;) await f.write(chunk);
  } catch (err) {
    assertMatch(String(err), /No space left on device/);
  } finally {
    f.close();
  }
}

const canMount = await (async () => {
  const probe = await Deno.makeTempDir({ prefix: "kimi-tmpfs-probe-" });
  try {
    const ok = await mountTmpfs(probe, "64k");
    if (ok) await umount(probe);
    return ok;
  } finally {
    await Deno.remove(probe, { recursive: true }).catch(() => {});
  }
})();

Deno.test({
  name: "full disk (tmpfs share dir): the failed append leaves only complete records, the error " +
    "is reported, and the session resumes",
  ignore: !canMount,
  async fn() {
    const mock = await startMockOpenAI({ checkToolPairing: true });
    const sb = await kimiSandbox();
    let mounted = false;
    try {
      mounted = await mountTmpfs(sb.shareDir, "4m");
      assert(mounted);
      const config = await sb.openaiConfig(mock.url);
      const filler = `${sb.shareDir}/filler`;
      // The disk fills up while the model is answering: its reply (a tool call with a 20 KB
      // output) can no longer be recorded.
      // The reply waits until the disk is full (the state, not a time: under load filling it
      // can take longer than any fixed delay).
      const { promise: diskFull, resolve: filled } = Promise.withResolvers<void>();
      mock.enqueue({
        waitFor: diskFull,
        text: "Writing it out.",
        toolCalls: [{
          id: "call_big",
          name: "Shell",
          arguments: JSON.stringify({ command: "head -c 20000 /dev/zero | tr '\\0' y" }),
        }],
      });
      const r = await sb.run(
        ["--print", "--yolo", "--session", "full-disk", "--config-file", config, "-p", "go"],
        {
          onSpawn: () => {
            (async () => {
              while (mock.requests.length === 0) await new Promise((res) => setTimeout(res, 20));
              await fillDisk(filler).finally(filled);
            })();
          },
        },
      );
      assertEquals(r.code, 1, r.stdout + r.stderr);
      assertMatch(
        r.stdout + r.stderr,
        /Could not write \S+\/full-disk\/(context|wire)\.jsonl: No space left on device[^\n]*The file was restored to its last complete record; free some disk space, then resume the session\./,
      );
      // Every file is complete JSON Lines even though the disk is still full.
      await assertSessionFilesValid(sb.shareDir);

      // Space comes back: the session resumes, and the request it sends is valid.
      await Deno.remove(filler);
      mock.enqueue({ text: "Resumed fine." });
      const again = await sb.run(
        ["--print", "--session", "full-disk", "--config-file", config, "-p", "go on"],
      );
      assertEquals(again.code, 0, again.stdout + again.stderr);
      assertStringIncludes(again.stdout, "Resumed fine.");
      const lines = await contextLines(await sessionDir(sb, "full-disk"));
      assertEquals(lines.filter((l) => l.role === "user").map((l) => l.content).slice(-1), [
        "go on",
      ]);
      // When the assistant's tool call made it to disk but its result did not, the resume
      // answered it (the mock refuses unpaired requests with 400, as OpenAI does).
      const call = lines.findIndex((l) => l.tool_calls?.[0]?.id === "call_big");
      if (call >= 0) assertEquals(lines[call + 1].tool_call_id, "call_big");
      await assertSessionFilesValid(sb.shareDir);
    } finally {
      if (mounted) {
        await Deno.remove(`${sb.shareDir}/sessions`, { recursive: true }).catch(() => {});
        await umount(sb.shareDir);
      }
      await sb.cleanup();
      await mock.close();
    }
  },
});

Deno.test("a tool call left without a result gets an error result on resume; the next request is valid", async () => {
  const mock = await startMockOpenAI({ checkToolPairing: true });
  const sb = await kimiSandbox();
  try {
    const config = await sb.openaiConfig(mock.url);
    mock.enqueue({ text: "First answer." });
    const first = await sb.run(
      ["--print", "--session", "dangling", "--config-file", config, "-p", "hello"],
    );
    assertEquals(first.code, 0, first.stdout + first.stderr);
    const dir = await sessionDir(sb, "dangling");
    // As a kill (or a full disk) right after the assistant message was written leaves it:
    // two tool calls, one result.
    const assistant = {
      role: "assistant",
      content: "Running two things.",
      tool_calls: [
        {
          type: "function",
          id: "call_a",
          function: { name: "Shell", arguments: '{"command":"ls"}' },
        },
        {
          type: "function",
          id: "call_b",
          function: { name: "Shell", arguments: '{"command":"pwd"}' },
        },
      ],
    };
    const result = { role: "tool", content: "file.txt\n", tool_call_id: "call_a" };
    await Deno.writeTextFile(
      `${dir}/context.jsonl`,
      JSON.stringify(assistant) + "\n" + JSON.stringify(result) + "\n",
      { append: true },
    );

    mock.enqueue({ text: "Picking up again." });
    const r = await sb.run(
      ["--print", "--session", "dangling", "--config-file", config, "-p", "continue"],
    );
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertStringIncludes(r.stdout, "Picking up again.");
    const sent = mock.requests.at(-1)!.body.messages as Line[];
    const at = sent.findIndex((m) => m.role === "assistant" && m.tool_calls?.length === 2);
    assertEquals(sent[at + 1], result);
    assertEquals(sent[at + 2].role, "tool");
    assertEquals(sent[at + 2].tool_call_id, "call_b");
    assertStringIncludes(
      JSON.stringify(sent[at + 2].content),
      "ERROR: This tool call was interrupted before its result was recorded",
    );
    // The answer is in the file too, right after the planted records.
    const lines = await contextLines(dir);
    const i = lines.findIndex((l) => l.tool_call_id === "call_a");
    assertEquals(lines[i + 1].tool_call_id, "call_b");
    assertEquals(lines[i + 1].role, "tool");
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

/** Spawn `main.ts` in the sandbox and keep the child (for a long-running holder). */
function spawnKimi(sb: KimiSandbox, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "-A", MAIN_TS, ...args],
    cwd: sb.workDir,
    clearEnv: true,
    env: {
      HOME: sb.home,
      KIMI_SHARE_DIR: sb.shareDir,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("one session, one writer: a second process is refused naming the holder, waits when asked, and takes over a dead holder's lock", async () => {
  const mock = await startMockOpenAI();
  const sb = await kimiSandbox();
  try {
    const config = await sb.openaiConfig(mock.url);
    mock.enqueue({ text: "Created." });
    const init = await sb.run(
      ["--print", "--session", "shared", "--config-file", config, "-p", "start"],
    );
    assertEquals(init.code, 0, init.stdout + init.stderr);
    const dir = await sessionDir(sb, "shared");

    // Holder: its model call hangs until it is killed.
    mock.enqueue({ text: "Holder done.", delayMs: 600_000 });
    const holder = spawnKimi(sb, [
      "--print",
      "--session",
      "shared",
      "--config-file",
      config,
      "-p",
      "hold",
    ]);
    while (mock.requests.length < 2) await new Promise((r) => setTimeout(r, 20));
    const contextBefore = await Deno.readTextFile(`${dir}/context.jsonl`);

    for (const args of [["--session", "shared"], ["--continue"]]) {
      const second = await sb.run(["--print", ...args, "--config-file", config, "-p", "intrude"]);
      assertEquals(second.code, 1, second.stdout + second.stderr);
      assertMatch(
        second.stderr,
        new RegExp(
          `Session shared is in use by another kimi process \\(pid ${holder.pid}, since ` +
            `\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\)\\. .*--wait-for-session`,
        ),
      );
    }
    // An embedder's `kimi --wire --session ID` is refused the same way.
    const wire = await sb.run(["--wire", "--session", "shared", "--config-file", config]);
    assertEquals(wire.code, 1, wire.stdout + wire.stderr);
    assertStringIncludes(
      wire.stderr,
      `Session shared is in use by another kimi process (pid ${holder.pid}, since `,
    );
    assertEquals(wire.stdout, "");
    assertEquals(mock.requests.length, 2, "the refused runs never reached the model");
    assertEquals(await Deno.readTextFile(`${dir}/context.jsonl`), contextBefore);

    // Read-only uses still work while the session is held.
    const exported = await sb.run(["export", "shared", "-o", `${sb.root}/shared.zip`]);
    assertEquals(exported.code, 0, exported.stdout + exported.stderr);

    // The holder dies without releasing: its lock is stale and is taken over.
    holder.kill("SIGKILL");
    await holder.output();
    const lock = JSON.parse(await Deno.readTextFile(`${dir}/session.lock`));
    assertEquals(lock.pid, holder.pid);
    mock.enqueue({ text: "Took over." });
    const after = await sb.run(
      ["--print", "--session", "shared", "--config-file", config, "-p", "mine now"],
    );
    assertEquals(after.code, 0, after.stdout + after.stderr);
    assertStringIncludes(after.stdout, "Took over.");
    await assertRejectsNotFound(`${dir}/session.lock`);

    // --wait-for-session: the second process waits for the first to finish, then runs.
    mock.enqueue({ text: "First finished.", delayMs: 1500 }, { text: "Second ran after." });
    const first = spawnKimi(sb, [
      "--print",
      "--session",
      "shared",
      "--config-file",
      config,
      "-p",
      "one",
    ]);
    const n = mock.requests.length;
    while (mock.requests.length < n + 1) await new Promise((r) => setTimeout(r, 20));
    const waiter = await sb.run([
      "--print",
      "--session",
      "shared",
      "--wait-for-session",
      "--config-file",
      config,
      "-p",
      "two",
    ]);
    const firstOut = await first.output();
    assertEquals(firstOut.code, 0, new TextDecoder().decode(firstOut.stderr));
    assertEquals(waiter.code, 0, waiter.stdout + waiter.stderr);
    assertStringIncludes(waiter.stdout, "Second ran after.");
    // Records of the two runs did not interleave: "one" and its answer come before "two".
    const users = (await contextLines(dir)).filter((l) =>
      l.role === "user" || l.role === "assistant"
    )
      .map((l) => typeof l.content === "string" ? l.content : JSON.stringify(l.content));
    const iOne = users.indexOf("one");
    assertEquals(users.slice(iOne, iOne + 4), [
      "one",
      "First finished.",
      "two",
      "Second ran after.",
    ]);
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

async function assertRejectsNotFound(path: string): Promise<void> {
  try {
    await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  throw new Error(`${path} still exists`);
}
