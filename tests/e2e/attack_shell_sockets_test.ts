/**
 * Attack class 5: the shell sandbox hides the host's sockets, agents and kimi's own secrets.
 * With the network off (hand-narrowed flags) `/run` and `/var/run` are empty; with it on (the
 * `workspace` profile) `/run` stays for DNS. Either way an ssh agent socket outside `/tmp` is
 * masked, host sockets under `/tmp` are out of sight, `SSH_AUTH_SOCK`/D-Bus/docker variables are not passed in, no
 * process's `/proc/<pid>/environ` shows kimi's environment, and kimi's control files (the share
 * dir's `mcp.json`, `mcp-oauth/`, and a `--config-file` inside the writable work dir) read as
 * empty and cannot be changed. Under `-A` the same commands see all of it.
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

const ENV_SECRET = "val-kimi-env-4410ab";
const MCP_SECRET = "sk-mcp-json-9c02ee";
const OAUTH_SECRET = "tok-oauth-6b1d73";
const FILE_SECRET = "sk-config-in-work-13f0aa";

function shell(id: string, command: string): string {
  return toolCallLine(id, "Shell", { command });
}

function attempts(sb: KimiSandbox, sock: string, x11: string): string[] {
  const s = sb.shareDir;
  return [
    shell(
      "vars",
      'echo "ssh=${SSH_AUTH_SOCK:-unset} dbus=${DBUS_SESSION_BUS_ADDRESS:-unset} ' +
        'docker=${DOCKER_HOST:-unset}"',
    ),
    shell("sock", `test -S ${sock} && echo sock-visible || echo sock-hidden`),
    shell("x11", `test -S ${x11} && echo x11-visible || echo x11-hidden`),
    shell("run", "echo run=$(ls -A /run | wc -l) varrun=$(ls -A /var/run/ | wc -l)"),
    shell(
      "environ",
      "echo found=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | " +
        `grep -c ${ENV_SECRET.slice(0, 12)})`,
    ),
    shell("mcp", `cat ${s}/mcp.json; ls -A ${s}/mcp-oauth; cat ${s}/mcp-oauth/srv.json`),
    shell("cfg", "cat kimi-config-*.json; echo cfg-read"),
    shell("plant-cfg", `for f in kimi-config-*.json; do echo '{}' > "$f"; done; echo tried`),
    "text: done",
  ];
}

async function attack(setup: Setup): Promise<void> {
  const sb = await kimiSandbox({ dir: "/var/tmp" });
  // An agent socket outside /tmp and /run (kimi may read its directory, so it can mask it),
  // and an X11-style socket under the host's /tmp.
  await Deno.mkdir(`${sb.root}/configs`, { recursive: true });
  const sock = `${sb.root}/configs/agent.sock`;
  const listener = Deno.listen({ transport: "unix", path: sock });
  const x11Dir = await Deno.makeTempDir({ prefix: "kimi-x11-" });
  const x11 = Deno.listen({ transport: "unix", path: `${x11Dir}/X0` });
  try {
    const s = sb.shareDir;
    await Deno.mkdir(`${s}/mcp-oauth`, { recursive: true });
    await Deno.writeTextFile(`${s}/mcp.json`, JSON.stringify({ env: { T: MCP_SECRET } }));
    await Deno.writeTextFile(`${s}/mcp-oauth/srv.json`, OAUTH_SECRET);
    // The config file in use lies inside the writable work dir (renamed to a known prefix).
    const r = await runAttack(sb, attempts(sb, sock, `${x11Dir}/X0`), await flagsFor(sb, setup), {
      env: {
        // Filtered from children's environment: only kimi's own /proc environ holds it.
        KIMI_API_KEY: ENV_SECRET,
        SSH_AUTH_SOCK: sock,
        DBUS_SESSION_BUS_ADDRESS: `unix:path=${sock}`,
        DOCKER_HOST: `unix://${sock}`,
      },
      apiKey: FILE_SECRET,
      configDir: sb.workDir,
    });
    assertEquals(r.code, 0, r.stderr);
    const res = r.result;
    const configs = [...Deno.readDirSync(sb.workDir)].filter((e) => e.name.startsWith("config-"));
    assertEquals(configs.length, 1);
    const configPath = `${sb.workDir}/${configs[0].name}`;

    if (setup === "full") {
      assertStringIncludes(res("vars"), `ssh=${sock} dbus=unix:path=${sock}`);
      assertStringIncludes(res("sock"), "sock-visible");
      assertStringIncludes(res("x11"), "x11-visible");
      assert(!res("run").includes("run=0 "), res("run"));
      // Unconfined, but in a pid namespace of its own: kimi's /proc environ stays out of reach
      // (tests/e2e/proc_isolation_test.ts shows the same probe reading it without bwrap).
      assertStringIncludes(res("environ"), "found=0");
      assertStringIncludes(res("mcp"), MCP_SECRET);
      return;
    }
    assertStringIncludes(res("vars"), "ssh=unset dbus=unset docker=unset");
    assertStringIncludes(res("sock"), "sock-hidden");
    assertStringIncludes(res("x11"), "x11-hidden");
    if (setup === "narrow") {
      // Network off: /run and /var/run are empty.
      assertStringIncludes(res("run"), "run=0 varrun=0");
    } else {
      // Network on: /run stays (DNS configuration); the agent socket is masked regardless.
      assert(!res("run").includes("run=0 "), res("run"));
    }
    assertStringIncludes(res("environ"), "found=0");
    for (const secret of [ENV_SECRET, MCP_SECRET, OAUTH_SECRET, FILE_SECRET]) {
      await assertNoLeak(sb, r, secret);
    }
    // The config file in use is masked although it lies in the writable work dir.
    assertStringIncludes(res("cfg"), "cfg-read");
    assert(!res("cfg").includes("scripted"), res("cfg"));
    assertStringIncludes(res("plant-cfg"), "tried");
    assertStringIncludes(await Deno.readTextFile(configPath), FILE_SECRET);
    assertEquals(
      await Deno.readTextFile(`${s}/mcp.json`),
      JSON.stringify({ env: { T: MCP_SECRET } }),
    );
  } finally {
    listener.close();
    x11.close();
    await Deno.remove(x11Dir, { recursive: true });
    await sb.cleanup();
  }
}

const NEEDS_BWRAP = [
  "shell sandbox (hand-narrowed, network off): no host sockets, agents, environ or secrets",
  "shell sandbox (workspace, network on): no agents, environ or secrets",
];
warnSkippedBwrap("attack_shell_sockets_test", NEEDS_BWRAP);

Deno.test({
  name: NEEDS_BWRAP[0],
  ignore: BWRAP_PROBLEM !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => attack("narrow"),
});

Deno.test({
  name: NEEDS_BWRAP[1],
  ignore: BWRAP_PROBLEM !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => attack("workspace"),
});

Deno.test({
  name: "shell sandbox (-A): the same commands see the sockets and secrets (not vacuous)",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => attack("full"),
});
