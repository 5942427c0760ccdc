/**
 * Attack class 1: a directory swapped for a symlink while an approval is pending. A background
 * Shell task replaces `work/dir` with a symlink (to a directory outside the workspace, or to
 * another directory inside it) while the wire client holds WriteFile's approval; the write is
 * refused because the path now leads elsewhere, and nothing is written anywhere. Without the
 * swap the same call writes the file.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import {
  BWRAP_PROBLEM,
  exists,
  flagsFor,
  scriptedConfigFile,
  type Setup,
  spawnWireWith,
  warnSkippedBwrap,
} from "../helpers/attack.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import type { WireLine, WireProcess } from "../helpers/wire_process.ts";

/** Where the swapped-in symlink points. */
type SwapTarget = "outside" | "inside" | "none";

interface RaceOutcome {
  /** WriteFile's ToolResult return value. */
  result: { is_error: boolean; message: string };
  /** The WriteFile approval request's description. */
  description: string;
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/**
 * Run the race over the wire: step 1 starts the swapper in the background, step 2 writes
 * `dir/file.txt`; the client approves the background command at once and holds WriteFile's
 * approval until the swap is done.
 */
async function race(sb: KimiSandbox, setup: Setup, swap: SwapTarget): Promise<RaceOutcome> {
  await Deno.mkdir(`${sb.workDir}/dir`);
  await Deno.mkdir(`${sb.workDir}/other`);
  await Deno.mkdir(`${sb.root}/outside`);
  const target = swap === "outside" ? `${sb.root}/outside` : `${sb.workDir}/other`;
  const swapper = swap === "none"
    ? "true"
    : `while [ ! -e go ]; do sleep 0.05; done; rm -r dir && ln -s ${target} dir && touch swapped`;
  const config = await scriptedConfigFile(sb, [
    toolCallLine("bg", "Shell", {
      command: swapper,
      run_in_background: true,
      description: "swap dir",
    }),
    toolCallLine("w", "WriteFile", { path: "dir/file.txt", content: "planted\n" }),
    "text: done",
    "text: done",
    "text: done",
  ]);
  const wire: WireProcess = spawnWireWith(sb, await flagsFor(sb, setup), [
    "--config-file",
    config,
  ]);
  try {
    await wire.call("init", "initialize", { protocol_version: "1.10" });
    await wire.send({
      jsonrpc: "2.0",
      id: "p-1",
      method: "prompt",
      params: { user_input: "go" },
    });
    let description = "";
    let result: RaceOutcome["result"] | null = null;
    while (true) {
      const msg: WireLine = await wire.next(60_000);
      if (msg.id === "p-1" && !("method" in msg)) break;
      if (msg.method === "request" && msg.params.type === "ApprovalRequest") {
        const p = msg.params.payload;
        if (p.sender === "WriteFile") {
          description = p.description;
          if (swap !== "none") {
            // Hold the approval until the background task has swapped the directory.
            await Deno.writeTextFile(`${sb.workDir}/go`, "");
            await waitFor(() => exists(`${sb.workDir}/swapped`), "the swap");
          }
        }
        await wire.send({
          jsonrpc: "2.0",
          id: msg.id,
          result: { request_id: msg.id, response: "approve", feedback: "" },
        });
      }
      if (msg.method === "event" && msg.params.type === "ToolResult") {
        const p = msg.params.payload;
        if (p.tool_call_id === "w") result = p.return_value;
      }
    }
    assert(result !== null, "WriteFile returned no result");
    return { result, description };
  } finally {
    await wire.finish();
  }
}

async function assertRaceRefused(setup: Setup, swap: "outside" | "inside"): Promise<void> {
  const sb = await kimiSandbox();
  try {
    const { result, description } = await race(sb, setup, swap);
    // The approval showed the real path that would have been written.
    assertEquals(description, `Write file \`${sb.workDir}/dir/file.txt\``);
    assertEquals(result.is_error, true);
    const now = swap === "outside" ? `${sb.root}/outside` : `${sb.workDir}/other`;
    assertEquals(
      result.message,
      "`dir/file.txt` changed while the approval was pending: it now leads to " +
        `\`${now}/file.txt\` instead of the approved \`${sb.workDir}/dir/file.txt\` (a ` +
        "directory on the way was replaced, e.g. by a symlink). Nothing was written; check " +
        "the path and try again.",
    );
    assertEquals(await exists(`${sb.root}/outside/file.txt`), false, "outside untouched");
    assertEquals(await exists(`${sb.workDir}/other/file.txt`), false, "other untouched");
    assert((await Deno.lstat(`${sb.workDir}/dir`)).isSymlink, "the swap happened");
  } finally {
    await sb.cleanup();
  }
}

const NEEDS_BWRAP = [
  "race, hand-narrowed flags: swap to outside the scope is refused",
  "race, workspace profile: swap to outside (still writable /tmp) is refused",
  "race, workspace profile: swap to another workspace dir is refused",
];
warnSkippedBwrap("attack_approval_race_test", NEEDS_BWRAP);

Deno.test({
  name: NEEDS_BWRAP[0],
  ignore: BWRAP_PROBLEM !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => assertRaceRefused("narrow", "outside"),
});

Deno.test({
  name: NEEDS_BWRAP[1],
  ignore: BWRAP_PROBLEM !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => assertRaceRefused("workspace", "outside"),
});

Deno.test({
  name: NEEDS_BWRAP[2],
  ignore: BWRAP_PROBLEM !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => assertRaceRefused("workspace", "inside"),
});

Deno.test({
  name: "race, -A: a swap during the approval is refused there too",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => assertRaceRefused("full", "outside"),
});

Deno.test({
  name: "race, -A: without a swap the same approved write succeeds (the refusal is not vacuous)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const sb = await kimiSandbox();
    try {
      const { result } = await race(sb, "full", "none");
      assertEquals(result.is_error, false, result.message);
      assertStringIncludes(result.message, "File successfully overwritten.");
      assertEquals(await Deno.readTextFile(`${sb.workDir}/dir/file.txt`), "planted\n");
    } finally {
      await sb.cleanup();
    }
  },
});
