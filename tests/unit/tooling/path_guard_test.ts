/**
 * Unit tests of the pieces the attack tests rely on: real-path resolution, the control-path
 * list and matcher, the secret filter, and approvals that must be asked.
 */
import { join } from "node:path";
import { ApprovalRuntime, ApprovalState } from "../../../lib/soul/approval.ts";
import {
  controlMatcher,
  controlPaths,
  ControlPathSet,
  matchControlPath,
} from "../../../lib/tooling/control_paths.ts";
import {
  type FilePin,
  openPinned,
  resolveRealPath,
  stillResolvesTo,
} from "../../../lib/fs/real_path.ts";
import { readPinned } from "../../../lib/tooling/read_target.ts";
import { toolOk } from "../../../lib/tooling/result.ts";
import { isProcessProcPath, isSecretFile, readRefusal } from "../../../lib/tooling/sensitive.ts";
import { readFileTool } from "../../../tools/read_file.ts";
import { readMediaFileTool } from "../../../tools/read_media_file.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { makeToolEnv, runTool } from "../../helpers/tool_env.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi-guard-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("resolveRealPath: symlinks, .., missing tails and dangling symlinks", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(`${dir}/real/sub`, { recursive: true });
    await Deno.symlink(`${dir}/real`, `${dir}/link`);
    await Deno.symlink(`${dir}/nowhere/file`, `${dir}/dangling`);
    assertEquals(resolveRealPath("link/sub/x.txt", dir), {
      ok: true,
      path: `${dir}/real/sub/x.txt`,
    });
    assertEquals(resolveRealPath(`${dir}/real/sub/../../link/a/b`), {
      ok: true,
      path: `${dir}/real/a/b`,
    });
    assertEquals(resolveRealPath(`${dir}/dangling`), {
      ok: false,
      reason: "symlink",
      at: `${dir}/dangling`,
    });
    assertEquals(resolveRealPath(`${dir}/dangling/deeper`), {
      ok: false,
      reason: "symlink",
      at: `${dir}/dangling`,
    });
    assert(stillResolvesTo(`${dir}/real/sub/x.txt`));
    assert(!stillResolvesTo(`${dir}/link/sub/x.txt`));
    // A directory swapped for a symlink: the resolved path no longer resolves to itself.
    const approved = `${dir}/real/sub/x.txt`;
    await Deno.remove(`${dir}/real/sub`);
    await Deno.mkdir(`${dir}/elsewhere`);
    await Deno.symlink(`${dir}/elsewhere`, `${dir}/real/sub`);
    assert(!stillResolvesTo(approved));
  });
});

Deno.test("control paths: share entries, registered files, a symlinked share dir, plans exempt", async () => {
  await withDir(async (dir) => {
    const real = `${dir}/real-share`;
    await Deno.mkdir(`${real}/credentials`, { recursive: true });
    await Deno.symlink(real, `${dir}/share`);
    const set = new ControlPathSet(`${dir}/share`, {
      test: [
        { path: `${dir}/cfg.toml`, kind: "file", what: "the config file in use", secret: true },
      ],
    });
    {
      const list = set.list();
      const match = controlMatcher(list);
      assertEquals(
        match(`${real}/config.toml`)?.what,
        "kimi's configuration (API keys, hooks, MCP servers)",
      );
      assertEquals(match(`${real}/credentials/a.json`)?.secret, true);
      assertEquals(match(`${real}/mcp-oauth/x.json`)?.what, "kimi's MCP OAuth tokens");
      assertEquals(match(`${real}/sessions/s/state.json`)?.secret, false);
      assertEquals(match(`${real}/plans/plan.md`), null);
      assertEquals(match(`${dir}/cfg.toml`)?.what, "the config file in use");
      assertEquals(match(`${dir}/other.toml`), null);
      assertEquals(matchControlPath(join(dir, "share-x"), list), null);
      assert(isSecretFile(`${dir}/cfg.toml`, list));
      // Another session's set does not hold this one's registered paths.
      const other = new ControlPathSet(`${dir}/share`).list();
      assertEquals(controlMatcher(other)(`${dir}/cfg.toml`), null);
      assert(!isSecretFile(`${dir}/cfg.toml`, other));
    }
  });
});

Deno.test("secret filter: /proc per-process entries, names, control files", () => {
  for (const p of ["/proc/self/environ", "/proc/1/mem", "/proc/thread-self/environ", "/proc/42"]) {
    assert(isProcessProcPath(p), p);
  }
  for (const p of ["/proc/cpuinfo", "/proc/sys/kernel/ostype", "/procx/1"]) {
    assert(!isProcessProcPath(p), p);
  }
  assertEquals(
    readRefusal("/s/config.toml", "cfg", { controls: controlPaths("/s") }),
    "`cfg` is kimi's configuration (API keys, hooks, MCP servers). Reading it is blocked to " +
      "protect credentials and the code kimi runs.",
  );
  assertEquals(
    readRefusal("/w/src/main.ts", "src/main.ts", { controls: controlPaths("/s") }),
    null,
  );
  assert(
    readRefusal("/w/.env", ".env", { controls: controlPaths("/s") })?.includes(
      "appears to contain",
    ),
  );
});

Deno.test("approvals that must be asked: yolo still asks, afk refuses, never whitelisted", async () => {
  const ask = { action: "edit kimi control file", description: "d", display: [], mustAsk: true };
  const runtime = new ApprovalRuntime(new ApprovalState({ yolo: true }));
  const sub = runtime.subscribe();
  const outcome = runtime.request({
    sender: "WriteFile",
    toolCallId: "t",
    ask,
    source: { kind: "foreground_turn", id: "turn" },
  });
  const req = await sub.next();
  assertEquals(runtime.pending().length, 1);
  runtime.pending()[0].resolve({
    request_id: runtime.pending()[0].payload.id,
    response: "approve_for_session",
    feedback: "",
  });
  assertEquals(await outcome, { approved: true });
  assert(req !== undefined);
  assertEquals(runtime.state.sessionRules(), []);

  const afk = new ApprovalRuntime(new ApprovalState({ runtimeAfk: true }));
  assertEquals(
    await afk.request({
      sender: "WriteFile",
      toolCallId: "t",
      ask,
      source: { kind: "foreground_turn", id: "turn" },
    }),
    {
      approved: false,
      feedback: "No user is present to approve this change, and it is never auto-approved.",
    },
  );
});

Deno.test("ReadFile and ReadMediaFile share one resolver: secrets, /proc and symlinks", async () => {
  await withDir(async (dir) => {
    const share = `${dir}/share`;
    const work = `${dir}/work`;
    await Deno.mkdir(share);
    await Deno.mkdir(work);
    // A PNG header is enough for the media type check.
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    await Deno.writeFile(`${share}/config.toml`, png);
    await Deno.writeFile(`${work}/pic.png`, png);
    await Deno.symlink(`${share}/config.toml`, `${work}/innocent.png`);
    await Deno.symlink(`${dir}/missing.png`, `${work}/dangling.png`);
    const env = makeToolEnv({ workDir: work, shareDir: share, capabilities: ["image_in"] });
    const tools = [(await readFileTool(env))!, (await readMediaFileTool(env))!];
    for (const tool of tools) {
      const secret = await runTool(tool, { path: `${work}/innocent.png` });
      assertEquals(secret.is_error, true);
      assertEquals(
        secret.message,
        `\`${work}/innocent.png\` is kimi's configuration (API keys, hooks, MCP servers). ` +
          "Reading it is blocked to protect credentials and the code kimi runs.",
      );
      const proc = await runTool(tool, { path: "/proc/self/environ" });
      assertEquals(proc.is_error, true);
      assert(proc.message.includes("a process's /proc entry"), proc.message);
      const dangling = await runTool(tool, { path: "dangling.png" });
      assert(dangling.message.includes("a symlink whose target does not exist"), dangling.message);
    }
    const ok = await runTool(tools[1], { path: "pic.png" });
    assertEquals(ok.is_error, false, ok.message);
  });
});

Deno.test("pinned reads: a directory swapped mid-read never yields the other file", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(`${dir}/d`);
    await Deno.mkdir(`${dir}/secret`);
    await Deno.writeTextFile(`${dir}/d/f.txt`, "public");
    await Deno.writeTextFile(`${dir}/secret/f.txt`, "SECRET");
    const path = `${dir}/d/f.txt`;
    const swap = async () => {
      await Deno.rename(`${dir}/d`, `${dir}/d-orig`);
      await Deno.symlink(`${dir}/secret`, `${dir}/d`);
    };
    const unswap = async () => {
      await Deno.remove(`${dir}/d`);
      await Deno.rename(`${dir}/d-orig`, `${dir}/d`);
    };
    const read = (pin: FilePin | null) => async () => {
      using file = await openPinned(path, pin);
      return toolOk({ output: new TextDecoder().decode(await readAllOf(file)) });
    };
    // Swapped before the open: the open finds another file.
    const r1 = await readPinned("d/f.txt", path, async (pin) => {
      await swap();
      try {
        return await read(pin)();
      } finally {
        await unswap();
      }
    });
    assertEquals(r1.is_error, true);
    assert(r1.message.includes("changed while it was being read"), r1.message);
    // Swapped after the read: the result is dropped.
    const r2 = await readPinned("d/f.txt", path, async (pin) => {
      const out = await read(pin)();
      await swap();
      return out;
    });
    assertEquals(r2.is_error, true);
    assert(!JSON.stringify(r2).includes("SECRET"));
    await unswap();
    // Untouched: the content comes back.
    const r3 = await readPinned("d/f.txt", path, (pin) => read(pin)());
    assertEquals(r3.output, "public");
  });
});

async function readAllOf(file: Deno.FsFile): Promise<Uint8Array> {
  const buf = new Uint8Array(1024);
  const n = await file.read(buf);
  return buf.subarray(0, n ?? 0);
}
