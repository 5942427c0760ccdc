/**
 * Attack class 3: Grep and Glob obey the same rules as ReadFile, in both engines (the bundled
 * rg under the `review` and `workspace` profiles, the pure-TS engine under hand-narrowed flags
 * that do not allow running rg). Symlinks shipped in the repo, a symlink created by Shell during
 * the run, a share dir that is itself a symlink, `..` in Glob patterns, `/proc/self`,
 * `/proc/<parent pid>` and `/proc/self/root` aliases all resolve first and are refused when they
 * land outside the scope or on a secret; `count_matches` is no oracle.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import {
  assertNoLeak,
  BWRAP_PROBLEM,
  flagsFor,
  runAttack,
  type Setup,
  warnSkippedBwrap,
} from "../helpers/attack.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";

const CONFIG_SECRET = "sk-share-config-c0ffee42";
const ENV_SECRET = "val-env-secret-5d7e19";
const OUTSIDE_SECRET = "outside-only-7a1b2c";

/**
 * A sandbox whose share dir is a symlink to `<root>/real-share` (with a secret config), a repo
 * with symlinks to a directory outside the scope and to the config, and that outside directory.
 */
async function prepare(sb: KimiSandbox): Promise<{ realShare: string; outside: string }> {
  const realShare = `${sb.root}/real-share`;
  const outside = `${sb.root}/outside`;
  await Deno.mkdir(realShare, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.symlink(realShare, sb.shareDir);
  await Deno.writeTextFile(`${realShare}/config.toml`, `api_key = "${CONFIG_SECRET}"\n`);
  await Deno.writeTextFile(`${outside}/notes.txt`, `${OUTSIDE_SECRET}\n`);
  await Deno.writeTextFile(`${sb.workDir}/code.txt`, "needle in the workspace\n");
  await Deno.symlink(outside, `${sb.workDir}/vendor`);
  await Deno.symlink(`${realShare}/config.toml`, `${sb.workDir}/settings.toml`);
  // A tree for Glob's `**` (listed by GNU find where --allow-run allows it, else by readDir).
  await Deno.mkdir(`${sb.workDir}/src/deep`, { recursive: true });
  await Deno.writeTextFile(`${sb.workDir}/src/deep/app.toml`, "name = 'app'\n");
  await Deno.symlink(`${realShare}/config.toml`, `${sb.workDir}/src/deep/cfg.toml`);
  await Deno.symlink(outside, `${sb.workDir}/src/vendor`);
  return { realShare, outside };
}

function script(sb: KimiSandbox, realShare: string, withShell: boolean): string[] {
  const grep = (id: string, args: Record<string, unknown>) => toolCallLine(id, "Grep", args);
  const glob = (id: string, args: Record<string, unknown>) => toolCallLine(id, "Glob", args);
  return [
    ...(withShell
      ? [toolCallLine("sh", "Shell", { command: `ln -s ${realShare}/config.toml made.toml` })]
      : []),
    grep("g-work", { pattern: "api_key|needle|outside-only", output_mode: "content" }),
    grep("g-count", { pattern: "api_key", output_mode: "count_matches" }),
    grep("g-link", { pattern: "api_key", path: `${sb.workDir}/settings.toml` }),
    grep("g-made", {
      pattern: "api_key",
      path: `${sb.workDir}/made.toml`,
      output_mode: "count_matches",
    }),
    grep("g-share", { pattern: "api_key", path: realShare, output_mode: "content" }),
    grep("g-self", {
      pattern: "KIMI_TEST_SECRET",
      path: "/proc/self/environ",
      output_mode: "count_matches",
    }),
    grep("g-parent", {
      pattern: "PATH",
      path: `/proc/${Deno.pid}/environ`,
      output_mode: "count_matches",
    }),
    grep("g-root", {
      pattern: "api_key",
      path: `/proc/self/root${sb.shareDir}/config.toml`,
      output_mode: "content",
    }),
    grep("g-vendor", { pattern: "outside-only", path: `${sb.workDir}/vendor` }),
    glob("glob-dots", { pattern: "../outside/*" }),
    glob("glob-vendor", { pattern: "vendor/*" }),
    glob("glob-ok", { pattern: "*.txt" }),
    glob("glob-tree", { pattern: "src/**/*.toml" }),
    glob("glob-vendor-tree", { pattern: "src/vendor/**" }),
    toolCallLine("r-root", "ReadFile", { path: `/proc/self/root${realShare}/config.toml` }),
    toolCallLine("r-environ", "ReadFile", { path: "/proc/self/environ" }),
    "text: done",
  ];
}

async function attack(setup: Setup): Promise<void> {
  const sb = await kimiSandbox();
  try {
    const { realShare, outside } = await prepare(sb);
    const withShell = setup === "workspace" || setup === "full";
    const flags = await flagsFor(sb, setup);
    const permissions = setup === "narrow"
      ? flags.map((f) => f.startsWith("--allow-read=") ? `${f},${realShare}` : f)
      : flags;
    const r = await runAttack(sb, script(sb, realShare, withShell), permissions, {
      env: { KIMI_TEST_SECRET: ENV_SECRET },
    });
    assertEquals(r.code, 0, r.stderr);
    const res = r.result;
    if (withShell) assertStringIncludes(res("sh"), "Command executed successfully");

    // The workspace search shows the workspace, not what the repo's symlinks lead to.
    assertStringIncludes(res("g-work"), "needle in the workspace");
    assert(!res("g-work").includes("api_key"), res("g-work"));
    assertStringIncludes(res("g-count"), "No matches found");

    const blocked = (id: string, real: string, what: string) =>
      assertStringIncludes(res(id), `leads to \`${real}\`, ${what}. Searching it is blocked`);
    const config = "kimi's configuration (API keys, hooks, MCP servers)";
    blocked("g-link", `${realShare}/config.toml`, config);
    if (withShell) blocked("g-made", `${realShare}/config.toml`, config);
    // The share dir itself is searchable; its config is dropped as a sensitive file.
    assertStringIncludes(res("g-share"), "Skipped 1 sensitive file(s) (config.toml)");
    // Refused: by kimi, or (narrower than -A) already by Deno, which guards /proc/*/environ.
    const procRefused = (id: string) => {
      const text = res(id);
      assert(
        text.includes("a process's /proc entry") || text.includes("Denied by the sandbox"),
        text,
      );
      assert(!text.includes("Found"), text);
    };
    procRefused("g-self");
    procRefused("g-parent");
    procRefused("r-environ");
    if (setup === "full") {
      assertStringIncludes(res("g-self"), "no counts or matches are given");
      assertStringIncludes(res("g-parent"), `\`/proc/${Deno.pid}/environ\`, a process's /proc`);
    }
    // `/proc/self/...` aliases: Deno itself guards them below -A; kimi resolves and refuses.
    if (setup === "full") {
      blocked("g-root", `${realShare}/config.toml`, config);
      assertStringIncludes(res("r-root"), "is kimi's configuration");
    } else {
      assertStringIncludes(res("g-root"), "Denied by the sandbox: this run may not read `/proc");
      assertStringIncludes(res("r-root"), "Denied by the sandbox: this run may not read `/proc");
    }

    if (setup === "narrow") {
      // Outside the read scope: the repo's symlink leads nowhere readable.
      assertStringIncludes(res("g-vendor"), `may not read \`${outside}\``);
    } else {
      assertStringIncludes(res("g-vendor"), "notes.txt");
    }
    // Glob never leaves the workspace, through `..` or a symlink.
    assertStringIncludes(res("glob-dots"), "No matches found for pattern `../outside/*`.");
    // (Under the narrowed flags the walk cannot even list the outside directory.)
    if (setup !== "narrow") assertStringIncludes(res("glob-dots"), "Left out 1 match(es)");
    assertStringIncludes(res("glob-vendor"), "No matches found for pattern `vendor/*`.");
    assertStringIncludes(res("glob-ok"), "code.txt");
    // A `**` walk: the symlink to the secret config is left out, the symlinked directory is not
    // walked by `**`, and walked as a start it leads out of the workspace.
    assertStringIncludes(res("glob-tree"), "src/deep/app.toml");
    assertStringIncludes(res("glob-tree"), "Found 1 matches for pattern `src/**/*.toml`.");
    assertStringIncludes(res("glob-tree"), "Left out 1 match(es)");
    assert(!res("glob-tree").includes("cfg.toml"), res("glob-tree"));
    assertStringIncludes(res("glob-vendor-tree"), "No matches found for pattern `src/vendor/**`.");
    assert(!res("glob-vendor-tree").includes("notes.txt"), res("glob-vendor-tree"));

    for (const secret of [CONFIG_SECRET, ENV_SECRET]) await assertNoLeak(sb, r, secret);
    if (setup === "narrow") await assertNoLeak(sb, r, OUTSIDE_SECRET);
  } finally {
    await sb.cleanup();
  }
}

const NEEDS_BWRAP = ["search (workspace, rg): symlinks, /proc and `..` never leak"];
warnSkippedBwrap("attack_search_test", NEEDS_BWRAP);

Deno.test({
  name: "search (review, rg): symlinks, /proc and `..` never leak",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => attack("review"),
});

Deno.test({
  name: NEEDS_BWRAP[0],
  ignore: BWRAP_PROBLEM !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => attack("workspace"),
});

Deno.test({
  name: "search (hand-narrowed, TS engine): symlinks, /proc and `..` never leak",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => attack("narrow"),
});

Deno.test({
  name: "search (-A): the same secrets stay hidden, the symlink outside is searchable",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => attack("full"),
});

Deno.test({
  name: "search (-A): the outside file a narrow run refuses is found (the denial is not vacuous)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const sb = await kimiSandbox();
    try {
      const { outside } = await prepare(sb);
      const r = await runAttack(sb, [
        toolCallLine("g", "Grep", {
          pattern: "outside-only",
          path: `${sb.workDir}/vendor`,
          output_mode: "content",
        }),
        "text: done",
      ], ["-A"]);
      assertEquals(r.code, 0, r.stderr);
      assertStringIncludes(r.result("g"), OUTSIDE_SECRET);
      assert(outside.length > 0);
    } finally {
      await sb.cleanup();
    }
  },
});
