/**
 * Attack class 4: Shell confinement fails closed. bubblewrap is found with only
 * `--allow-run=bash,bwrap` (no read permission on `/usr/bin`); when it is unavailable under a
 * scope narrower than full, every Shell call is refused with the cause and the fix (nothing
 * runs), `kimi info` says so, and `sandbox.require_shell_confinement = false` restores
 * unconfined commands. Under `-A` commands run unconfined.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { BWRAP_PROBLEM, exists, flagsFor, runAttack, warnSkippedBwrap } from "../helpers/attack.ts";
import {
  denoDir,
  type KimiSandbox,
  kimiSandbox,
  MAIN_TS,
  toolCallLine,
} from "../helpers/kimi_process.ts";

const NO_BWRAP = { KIMI_BWRAP_PATH: "/nonexistent/bwrap" };

function attempts(sb: KimiSandbox): string[] {
  return [
    toolCallLine("out", "Shell", { command: `touch ${sb.root}/outside.txt` }),
    toolCallLine("in", "Shell", { command: "touch inside.txt && echo inside-ok" }),
    toolCallLine("bg", "Shell", {
      command: `touch ${sb.root}/bg-outside.txt`,
      run_in_background: true,
      description: "bg",
    }),
    "text: done",
    // Print mode re-enters the agent when the background task ends.
    "text: done",
    "text: done",
  ];
}

async function info(sb: KimiSandbox, permissions: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...permissions, MAIN_TS, "info", "--json"],
    cwd: sb.workDir,
    clearEnv: true,
    env: {
      HOME: sb.home,
      KIMI_SHARE_DIR: sb.shareDir,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout)).shell_confinement;
}

const NEEDS_BWRAP = [
  "fail closed: bwrap found by spawning it without read permission on /usr/bin",
];
warnSkippedBwrap("attack_shell_fail_closed_test", NEEDS_BWRAP);

Deno.test({
  name: NEEDS_BWRAP[0],
  ignore: BWRAP_PROBLEM !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const sb = await kimiSandbox({ dir: "/var/tmp" });
    try {
      const flags = await flagsFor(sb, "narrow");
      assert(!flags.some((f) => f.startsWith("--allow-read") && f.includes("/usr")), "no /usr");
      const r = await runAttack(sb, attempts(sb), flags);
      assertEquals(r.code, 0, r.stderr);
      const sandbox = `sandboxed: writes only to ${sb.workDir} and a private /tmp; network off`;
      assertStringIncludes(r.result("out"), "Read-only file system");
      assertStringIncludes(r.result("in"), `inside-ok`);
      assertStringIncludes(r.result("in"), `Command executed successfully (${sandbox}).`);
      assertStringIncludes(r.result("bg"), `Background task started (${sandbox}).`);
      assertEquals(await exists(`${sb.root}/outside.txt`), false);
      assertEquals(await exists(`${sb.root}/bg-outside.txt`), false);
      assert(await exists(`${sb.workDir}/inside.txt`));
      const st = await info(sb, flags);
      assertEquals([st.shell, st.required, st.bwrap], ["confined", true, "bwrap"]);
    } finally {
      await sb.cleanup();
    }
  },
});

for (const setup of ["narrow", "workspace"] as const) {
  Deno.test({
    name: `fail closed (${setup}): without bwrap every Shell call is refused, nothing runs`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const sb = await kimiSandbox({ dir: "/var/tmp" });
      try {
        const flags = await flagsFor(sb, setup);
        const r = await runAttack(sb, attempts(sb), flags, { env: NO_BWRAP });
        assertEquals(r.code, 0, r.stderr);
        const refusal = "<system>ERROR: Shell commands must run confined because this run's " +
          "Deno permissions are narrower than full access, but bubblewrap (bwrap) was not " +
          "found. Install bubblewrap (e.g. apt-get install bubblewrap) and make sure this run " +
          "may start it (--allow-run=bwrap), or set sandbox.require_shell_confinement = false " +
          "in the config to run shell commands unconfined (they can then write wherever your " +
          "user can, reach the network and read kimi's configuration).</system>";
        for (const id of ["out", "in", "bg"]) assertEquals(r.result(id), refusal);
        assertEquals(await exists(`${sb.root}/outside.txt`), false);
        assertEquals(await exists(`${sb.workDir}/inside.txt`), false);
        assertEquals(await exists(`${sb.root}/bg-outside.txt`), false);
        assert(!r.stderr.includes("not confined"), r.stderr);
        const st = await info(sb, flags, NO_BWRAP);
        assertEquals([st.shell, st.required, st.confined], ["refused", true, false]);
      } finally {
        await sb.cleanup();
      }
    },
  });
}

Deno.test({
  name: "fail closed: require_shell_confinement = false opts out (unconfined, announced once)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const sb = await kimiSandbox({ dir: "/var/tmp" });
    try {
      const flags = await flagsFor(sb, "workspace");
      const r = await runAttack(sb, attempts(sb).slice(0, 2).concat("text: done"), flags, {
        env: NO_BWRAP,
        config: { sandbox: { require_shell_confinement: false } },
      });
      assertEquals(r.code, 0, r.stderr);
      assertStringIncludes(r.result("in"), "Command executed successfully.");
      assert(!r.result("in").includes("sandboxed"), r.result("in"));
      assertStringIncludes(r.result("in"), "inside-ok");
      assert(await exists(`${sb.root}/outside.txt`), "unconfined: the outside write happened");
      assertStringIncludes(r.stderr, "kimi: shell commands are not confined");
    } finally {
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "fail closed: -A never needs bwrap (commands run unconfined)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const sb = await kimiSandbox({ dir: "/var/tmp" });
    try {
      const r = await runAttack(sb, attempts(sb), ["-A"], { env: NO_BWRAP });
      assertEquals(r.code, 0, r.stderr);
      assertEquals(r.result("out"), "<system>Command executed successfully.</system>");
      assert(await exists(`${sb.root}/outside.txt`));
      const st = await info(sb, ["-A"], NO_BWRAP);
      assertEquals([st.shell, st.needed], ["unconfined", false]);
    } finally {
      await sb.cleanup();
    }
  },
});
