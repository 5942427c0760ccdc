import { exists } from "../../../lib/fs/exists.ts";
import { stringify as stringifyToml } from "smol-toml";
import { PASSTHROUGH_WRAPPER, wrapCommand } from "../../../lib/process/command_wrapper.ts";
import { BWRAP_PATH_ENV, capDropArgs, findBwrap, probeBwrap } from "../../../lib/sandbox/bwrap.ts";
import {
  bwrapArgv,
  confinementWrapper,
  CONTROL_SOCKET_DIRS,
  CONTROL_SOCKETS,
  planConfinement,
  SOCKET_ENV_VARS,
} from "../../../lib/sandbox/confinement.ts";
import {
  setupShellConfinement,
  shellConfinementStatus,
  warnOnce,
} from "../../../lib/sandbox/setup.ts";
import { type ControlPath, projectControlPaths } from "../../../lib/tooling/control_paths.ts";
import { type AccessKind, FULL_SCOPE, type PermissionScope } from "../../../lib/tooling/scope.ts";
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../../helpers/assert.ts";
import { denoDir, MAIN_TS, toolCallLine } from "../../helpers/kimi_process.ts";

const BWRAP = findBwrap();
const BWRAP_PROBLEM = BWRAP === null ? "bwrap not found on PATH" : await probeBwrap(BWRAP);
const HAVE_BWRAP = BWRAP_PROBLEM === null;
const NEEDS_BWRAP = [
  "bwrapArgv output runs under the real bwrap: read-only root, private /tmp, hidden secrets",
  "e2e: confined Shell under a narrow scope blocks writes, network, secrets and /proc",
  "e2e: the same Shell attempts succeed unconfined under -A",
  "e2e: kimi info reports shell confinement",
];
if (!HAVE_BWRAP) {
  console.warn(
    `\n!!! SKIPPING ${NEEDS_BWRAP.length} bubblewrap tests (${BWRAP_PROBLEM}):\n` +
      NEEDS_BWRAP.map((n) => `!!!   - ${n}`).join("\n") + "\n",
  );
}

const FAKE_CONFIG_KEY = "sk-fake-config-key-0123456789";
const FAKE_ENV_KEY = "sk-fake-env-key-9876543210";
const FAKE_TOKEN = "fake-oauth-token-abcdef123456";

/** A scope granting writes below `writable` only (or everything), and net only when `net`. */
function fakeScope(opts: { writable: string[] | "all"; net: boolean }): PermissionScope {
  return {
    check(kind: AccessKind, target?: string) {
      let ok = true;
      if (kind === "write") {
        ok = opts.writable === "all" ||
          (target !== undefined &&
            opts.writable.some((w) => target === w || target.startsWith(w + "/")));
      }
      if (kind === "net") ok = opts.net;
      return ok ? { allowed: true } : { allowed: false, message: "denied" };
    },
  };
}

function kind(path: string): "dir" | "file" | null {
  try {
    return Deno.statSync(path).isDirectory ? "dir" : "file";
  } catch {
    return null;
  }
}

function realOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

async function tempDir(dir?: string): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi-sbx-", dir }));
}

// ---------------------------------------------------------------------------------------------
// Unit tests

Deno.test("planConfinement: a full scope is not confined", () => {
  const plan = planConfinement({
    workDir: "/w",
    additionalDirs: [],
    shareDir: "/s",
    scope: FULL_SCOPE,
  });
  assertEquals(plan.confined, false);
  assertEquals(plan.network, true);
  assertEquals(plan.description, "not sandboxed");
  assertEquals(plan.reason, "the run may write anywhere and use the network");
});

Deno.test("planConfinement: narrow write scope keeps writable workspace dirs only", async () => {
  const root = await tempDir();
  try {
    const work = `${root}/work`;
    const extra = `${root}/extra`;
    const ro = `${root}/ro`;
    for (const d of [work, extra, ro]) await Deno.mkdir(d);
    const plan = planConfinement({
      workDir: work,
      additionalDirs: [extra, ro, `${root}/missing`, "relative", work],
      shareDir: `${root}/share`,
      scope: fakeScope({ writable: [work, extra, `${root}/missing`], net: false }),
    });
    assertEquals(plan, {
      confined: true,
      reason: "write access is limited and network access is limited",
      writable: [work, extra],
      readable: [work, extra, ro],
      network: false,
      description: `sandboxed: writes only to ${work}, ${extra} and a private /tmp; network off`,
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("planConfinement: write-all but limited net unshares only the network", () => {
  const plan = planConfinement({
    workDir: "/",
    additionalDirs: [],
    shareDir: "/s",
    scope: fakeScope({ writable: "all", net: false }),
  });
  assertEquals(plan.confined, true);
  assertEquals(plan.writable, ["/"]);
  assertEquals(plan.network, false);
  assertEquals(plan.reason, "network access is limited");
  assertEquals(plan.description, "sandboxed: writes anywhere but a private /tmp; network off");
  const limitedWrite = planConfinement({
    workDir: "/nonexistent-dir-for-test",
    additionalDirs: [],
    shareDir: "/s",
    scope: fakeScope({ writable: [], net: true }),
  });
  assertEquals(limitedWrite.writable, []);
  assertEquals(limitedWrite.network, true);
  assertEquals(
    limitedWrite.description,
    "sandboxed: writes only to a private /tmp; network on",
  );
});

Deno.test("bwrapArgv: exact argument vector, secrets hidden only where visible", async () => {
  const root = await tempDir();
  try {
    const work = `${root}/work`;
    const share = `${work}/.kimi`; // inside the writable work dir, so visible in the sandbox
    await Deno.mkdir(`${share}/credentials`, { recursive: true });
    await Deno.writeTextFile(`${share}/config.toml`, "x");
    const plan = planConfinement({
      workDir: work,
      additionalDirs: [],
      shareDir: share,
      scope: fakeScope({ writable: [work], net: false }),
    });
    const unset = SOCKET_ENV_VARS.flatMap((v) => ["--unsetenv", v]);
    const hostSockets = [
      ...CONTROL_SOCKET_DIRS.filter((d) => kind(d) === "dir").flatMap((d) => ["--tmpfs", d]),
      ...CONTROL_SOCKETS.map((f) => realOrNull(f)).filter((f) => f !== null && kind(f) === "file")
        .flatMap((f) => ["--dev-bind", "/dev/null", f!]),
    ];
    const run = Deno.statSync("/run").isDirectory ? ["--tmpfs", "/run"] : [];
    // (The host's own sockets are left out: they depend on what else runs on the machine.)
    const noHostSockets = () => [];
    assertEquals(
      bwrapArgv(plan, ["bash", "-c", "true"], {
        cwd: work,
        shareDir: share,
        hostSockets: noHostSockets,
      }),
      [
        "bwrap",
        "--die-with-parent",
        "--unshare-pid",
        ...capDropArgs(),
        "--unshare-net",
        ...unset,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        ...run,
        "--bind",
        work,
        work,
        // The share dir is read-only, its secrets masked (parents first).
        "--ro-bind",
        share,
        share,
        "--dev-bind",
        "/dev/null",
        `${share}/config.toml`,
        "--tmpfs",
        `${share}/credentials`,
        "--chdir",
        work,
        "--",
        "bash",
        "-c",
        "true",
      ],
    );

    // Share dir under the private /tmp and not bound: nothing to hide, no mount points made.
    // A read-only work dir under /tmp is bound back read-only; network kept when allowed.
    const other = `${root}/share`;
    await Deno.mkdir(`${other}/credentials`, { recursive: true });
    await Deno.writeTextFile(`${other}/config.toml`, "x");
    const roPlan = planConfinement({
      workDir: work,
      additionalDirs: [],
      shareDir: other,
      scope: fakeScope({ writable: [], net: true }),
    });
    assertEquals(roPlan.writable, []);
    assertEquals(
      bwrapArgv(roPlan, ["sh"], {
        cwd: work,
        shareDir: other,
        bwrap: "/b/bwrap",
        hostSockets: noHostSockets,
      }),
      [
        "/b/bwrap",
        "--die-with-parent",
        "--unshare-pid",
        ...capDropArgs(),
        ...unset,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--ro-bind",
        work,
        work,
        // Network on: /run stays, but not the per-user runtime dirs and host control sockets.
        ...hostSockets,
        "--chdir",
        work,
        "--",
        "sh",
      ],
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("confinementWrapper: a session's commands go through bwrap; another's do not", () => {
  const plan = planConfinement({
    workDir: "/nonexistent-w",
    additionalDirs: [],
    shareDir: "/nonexistent-s",
    scope: fakeScope({ writable: [], net: false }),
  });
  const confined = confinementWrapper(plan, { bwrap: "/x/bwrap", shareDir: "/nonexistent-s" });
  const argv = wrapCommand(confined, ["bash", "-c", "ls"], { cwd: "/", env: {} });
  assertEquals(argv[0], "/x/bwrap");
  assertEquals(argv.slice(-6), ["--chdir", "/", "--", "bash", "-c", "ls"]);
  assert(argv.includes("--unshare-net"));
  // Another session's wrapper (its plan needs none) is untouched by the first one.
  assertEquals(
    wrapCommand(PASSTHROUGH_WRAPPER, ["bash", "-c", "ls"], { cwd: "/", env: {} }),
    ["bash", "-c", "ls"],
  );
  // A plan that is not confined gives the passthrough.
  const open = planConfinement({
    workDir: "/nonexistent-w",
    additionalDirs: [],
    shareDir: "/nonexistent-s",
    scope: FULL_SCOPE,
  });
  assertEquals(
    confinementWrapper(open, { bwrap: "/x/bwrap", shareDir: "/s" }),
    PASSTHROUGH_WRAPPER,
  );
});

Deno.test("confinementWrapper: the session's control paths are masked, read at each command", () => {
  const plan = planConfinement({
    workDir: "/nonexistent-w",
    additionalDirs: [],
    shareDir: "/nonexistent-s",
    scope: fakeScope({ writable: [], net: false }),
  });
  let controls: ControlPath[] = [];
  const wrapper = confinementWrapper(plan, {
    bwrap: "/x/bwrap",
    shareDir: "/nonexistent-s",
    controlPaths: () => controls,
  });
  const masked = (argv: string[]) => argv.join(" ").includes("/etc/hostname");
  assertEquals(masked(wrapCommand(wrapper, ["sh"], { cwd: "/", env: {} })), false);
  controls = [{ path: "/etc/hostname", kind: "file", what: "a test secret", secret: true }];
  assert(masked(wrapCommand(wrapper, ["sh"], { cwd: "/", env: {} })));
});

Deno.test("findBwrap: KIMI_BWRAP_PATH override and PATH lookup with executable check", async () => {
  const root = await tempDir();
  try {
    const bin = `${root}/bin`;
    const noexec = `${root}/noexec`;
    await Deno.mkdir(bin);
    await Deno.mkdir(noexec);
    await Deno.writeTextFile(`${bin}/bwrap`, "#!/bin/sh\n", { mode: 0o755 });
    await Deno.writeTextFile(`${noexec}/bwrap`, "not a program", { mode: 0o644 });
    const env = (vars: Record<string, string>) => (n: string) => vars[n];
    assertEquals(findBwrap(env({ PATH: `${noexec}:relative:${bin}` })), `${bin}/bwrap`);
    assertEquals(findBwrap(env({ PATH: noexec })), null);
    assertEquals(findBwrap(env({ PATH: bin, [BWRAP_PATH_ENV]: `${root}/none` })), null);
    assertEquals(findBwrap(env({ PATH: "", [BWRAP_PATH_ENV]: `${bin}/bwrap` })), `${bin}/bwrap`);
    assertEquals(findBwrap(env({ [BWRAP_PATH_ENV]: "bwrap" })), null);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("setupShellConfinement: missing bwrap warns once, or refuses when required", async () => {
  const scope = fakeScope({ writable: [], net: false });
  const base = {
    workDir: "/nonexistent-w",
    additionalDirs: () => [],
    shareDir: "/nonexistent-s",
    scope,
    getEnv: (n: string) => (n === BWRAP_PATH_ENV ? "/nonexistent/bwrap" : undefined),
  };
  {
    const refusedWarnings: string[] = [];
    const refused = await setupShellConfinement({
      ...base,
      requireConfinement: true,
      warn: (l) => refusedWarnings.push(l),
    });
    // Shell is refused; hooks and MCP servers still run, without a pid namespace: said once.
    assertEquals(refusedWarnings, [
      "kimi: the processes kimi starts (shell commands, hooks, MCP servers, plugin tools) are " +
      "not isolated from it: bubblewrap (bwrap) was not found, so they can read kimi's " +
      "environment through /proc/<pid>/environ. Install bubblewrap (e.g. apt-get install " +
      "bubblewrap) to run them in their own pid namespace.",
    ]);
    assertEquals(refused.isolated, false);
    assertEquals(refused.isolation, PASSTHROUGH_WRAPPER);
    assert(refused.view?.refusal, "a refusal is expected");
    assertEquals(
      refused.view.refusal,
      "Shell commands must run confined because this run's Deno permissions are narrower " +
        "than full access, but bubblewrap (bwrap) was not found. Install bubblewrap (e.g. " +
        "apt-get install bubblewrap) and make sure this run may start it (--allow-run=bwrap), " +
        "or set sandbox.require_shell_confinement = false in the config to run shell commands " +
        "unconfined (they can then write wherever your user can, reach the network and read " +
        "kimi's configuration).",
    );
    assertThrows(
      () => wrapCommand(refused.wrapper, ["bash"], { cwd: "/", env: {} }),
      /must run confined/,
    );

    const warnings: string[] = [];
    const warn = warnOnce((l: string) => warnings.push(l));
    const unconfined = await setupShellConfinement({ ...base, requireConfinement: false, warn });
    assertEquals(unconfined.view, null);
    assertEquals(unconfined.wrapper, PASSTHROUGH_WRAPPER);
    assertEquals(
      (await setupShellConfinement({ ...base, requireConfinement: false, warn })).view,
      null,
    );
    assertEquals(warnings, [
      "kimi: shell commands are not confined: bubblewrap (bwrap) was not found. Install it " +
      "(e.g. apt-get install bubblewrap) to confine them. They, hooks, MCP servers and plugin " +
      "tools can also read kimi's environment through /proc/<pid>/environ.",
    ]);
    // Unconfined: passthrough.
    assertEquals(wrapCommand(unconfined.wrapper, ["bash"], { cwd: "/", env: {} }), ["bash"]);

    // A full scope needs no confinement; without bwrap its commands run as given, and kimi
    // says once that they are not isolated.
    const fullWarnings: string[] = [];
    const full = await setupShellConfinement({
      ...base,
      scope: FULL_SCOPE,
      requireConfinement: true,
      warn: (l) => fullWarnings.push(l),
    });
    assertEquals(full.view, null);
    assertEquals(full.wrapper, PASSTHROUGH_WRAPPER);
    assertEquals(fullWarnings.length, 1);
    assertStringIncludes(fullWarnings[0], "are not isolated from it: bubblewrap (bwrap) was not");

    const status = await shellConfinementStatus({
      workDir: "/nonexistent-w",
      additionalDirs: [],
      shareDir: "/nonexistent-s",
      scope,
    }, base.getEnv);
    assertEquals(status.confined, false);
    assertEquals(status.needed, true);
    assertEquals(status.bwrap, null);
    assertEquals(status.reason, "bubblewrap (bwrap) was not found");
    assertEquals(status.secrets_hidden, false);
  }
});

Deno.test({
  name: NEEDS_BWRAP[0],
  ignore: !HAVE_BWRAP,
  async fn() {
    const root = await tempDir("/var/tmp");
    try {
      const work = `${root}/work`;
      const share = `${root}/share`;
      await Deno.mkdir(work);
      await Deno.mkdir(`${share}/credentials`, { recursive: true });
      await Deno.writeTextFile(`${share}/config.toml`, `api_key = "${FAKE_CONFIG_KEY}"\n`);
      await Deno.writeTextFile(`${share}/credentials/t.json`, FAKE_TOKEN);
      await Deno.writeTextFile("/tmp/kimi-sbx-host-file", "host");
      const plan = planConfinement({
        workDir: work,
        additionalDirs: [],
        shareDir: share,
        scope: fakeScope({ writable: [work], net: false }),
      });
      const script = [
        `touch ${root}/outside 2>&1 || echo outside-denied`,
        `touch ${work}/inside && echo inside-ok`,
        "test -e /tmp/kimi-sbx-host-file || echo tmp-private",
        `cat ${share}/config.toml && echo config-read`,
        `ls -A ${share}/credentials; echo creds-listed`,
        "echo pid=$$",
      ].join("\n");
      const argv = bwrapArgv(plan, ["bash", "-c", script], {
        cwd: work,
        shareDir: share,
        bwrap: BWRAP!,
      });
      const out = await new Deno.Command(argv[0], { args: argv.slice(1), stderr: "piped" })
        .output();
      const text = new TextDecoder().decode(out.stdout);
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      assertStringIncludes(text, "Read-only file system");
      assertStringIncludes(text, "outside-denied");
      assertStringIncludes(text, "inside-ok");
      assertStringIncludes(text, "tmp-private");
      assertStringIncludes(text, "config-read\ncreds-listed\n");
      assert(!text.includes(FAKE_CONFIG_KEY) && !text.includes("t.json"), text);
      assertMatchPid(text);
      assert(await exists(`${work}/inside`, { noFollow: true }));
      assert(!(await exists(`${root}/outside`, { noFollow: true })));
    } finally {
      await Deno.remove(root, { recursive: true });
      await Deno.remove("/tmp/kimi-sbx-host-file").catch(() => {});
    }
  },
});

function assertMatchPid(text: string): void {
  const pid = Number(text.match(/pid=(\d+)/)?.[1]);
  assert(pid > 0 && pid < 10, `expected a small pid in a fresh pid namespace, got ${pid}`);
}

// ---------------------------------------------------------------------------------------------
// End-to-end through main.ts

/** An isolated run environment outside /tmp, so that hiding (not just /tmp) is exercised. */
interface E2E {
  root: string;
  home: string;
  share: string;
  work: string;
  outside: string;
  cleanup(): Promise<void>;
}

async function e2eDirs(): Promise<E2E> {
  const root = await tempDir("/var/tmp");
  const home = `${root}/home`;
  const share = `${home}/.kimi`;
  const work = `${root}/work`;
  const outside = `${root}/outside`;
  for (const d of [work, outside, `${share}/credentials`]) await Deno.mkdir(d, { recursive: true });
  await Deno.writeTextFile(`${share}/credentials/token.json`, JSON.stringify({ t: FAKE_TOKEN }));
  return {
    root,
    home,
    share,
    work,
    outside,
    cleanup: () => Deno.remove(root, { recursive: true }),
  };
}

/** Write the scripted-echo config (with a fake provider key) as the share dir's config.toml. */
async function writeConfig(
  e: E2E,
  scripts: string[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  const scriptsPath = `${e.root}/scripts.json`;
  await Deno.writeTextFile(scriptsPath, JSON.stringify(scripts));
  const config = {
    default_model: "scripted",
    models: { scripted: { provider: "echo", model: "scripted_echo", max_context_size: 100000 } },
    providers: {
      echo: {
        type: "_scripted_echo",
        base_url: "",
        api_key: FAKE_CONFIG_KEY,
        env: { KIMI_SCRIPTED_ECHO_SCRIPTS: scriptsPath },
      },
    },
    ...extra,
  };
  await Deno.writeTextFile(`${e.share}/config.toml`, stringifyToml(config));
}

interface E2EResult {
  code: number;
  stderr: string;
  /** Tool result text by tool call id. */
  results: Map<string, string>;
}

/**
 * Run `kimi --print` with `permissions`; the agent's pid is written to `<work>/agent.pid`
 * before the prompt is sent, so a Shell command can name it.
 */
async function runKimi(
  e: E2E,
  permissions: string[],
  env: Record<string, string> = {},
): Promise<E2EResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      ...permissions,
      MAIN_TS,
      "--print",
      "--output-format",
      "stream-json",
    ],
    cwd: e.work,
    clearEnv: true,
    env: {
      HOME: e.home,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      KIMI_API_KEY: FAKE_ENV_KEY,
      ...env,
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await Deno.writeTextFile(`${e.work}/agent.pid`, String(child.pid));
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode("go\n"));
  await w.close();
  const out = await child.output();
  const results = new Map<string, string>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.role !== "tool") continue;
    const text = typeof msg.content === "string"
      ? msg.content
      : msg.content.map((p: { text?: string }) => p.text ?? "").join("\n");
    results.set(msg.tool_call_id, text);
  }
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr), results };
}

/** The Shell attempts both e2e tests make, keyed by tool call id. */
function attempts(e: E2E, port: number): string[] {
  const shell = (id: string, command: string, extra: Record<string, unknown> = {}) =>
    toolCallLine(id, "Shell", { command, ...extra });
  return [
    shell("bg", `touch ${e.outside}/bg-bad; touch ${e.work}/bg-ok`, {
      run_in_background: true,
      description: "bg touch",
    }),
    shell("outside", `touch ${e.outside}/bad`),
    shell("inside", `touch ${e.work}/ok && echo inside-ok`),
    shell("env", "env"),
    shell("config", "cat ~/.kimi/config.toml"),
    shell("creds", `ls -A ${e.share}/credentials; cat ${e.share}/credentials/token.json`),
    shell("environ", `cat /proc/$(cat ${e.work}/agent.pid)/environ | tr '\\0' '\\n'`),
    shell("net", `exec 3<>/dev/tcp/127.0.0.1/${port} && echo net-connected`),
    "text: done",
  ];
}

/** A TCP listener on 127.0.0.1 that accepts and closes connections. */
function listener(): { port: number; close(): void } {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    try {
      for await (const conn of l) conn.close();
    } catch {
      // closed
    }
  })();
  return { port: (l.addr as Deno.NetAddr).port, close: () => l.close() };
}

function assertNoSecret(text: string, what: string): void {
  for (const s of [FAKE_CONFIG_KEY, FAKE_ENV_KEY, FAKE_TOKEN]) {
    assert(!text.includes(s), `${what} reveals a secret:\n${text}`);
  }
}

Deno.test({
  name: NEEDS_BWRAP[1],
  ignore: !HAVE_BWRAP,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const e = await e2eDirs();
    const srv = listener();
    try {
      await writeConfig(e, attempts(e, srv.port));
      const r = await runKimi(e, [
        "--allow-read",
        "--allow-env",
        `--allow-write=${e.work},${e.share}`,
        "--allow-run",
      ]);
      assertEquals(r.code, 0, r.stderr);
      assert(!r.stderr.includes("not confined"), r.stderr);
      const sandbox = `sandboxed: writes only to ${e.work} and a private /tmp; network off`;
      const res = (id: string) => r.results.get(id) ?? `<no result for ${id}>`;

      assertStringIncludes(res("outside"), "Read-only file system");
      assertStringIncludes(res("outside"), `Command failed with exit code: 1 (${sandbox}).`);
      assertStringIncludes(res("inside"), "inside-ok");
      assertStringIncludes(res("inside"), `Command executed successfully (${sandbox}).`);
      assertStringIncludes(res("bg"), `Background task started (${sandbox}).`);
      assert(await exists(`${e.work}/ok`, { noFollow: true }));
      assert(!(await exists(`${e.outside}/bad`, { noFollow: true })));
      assert(await exists(`${e.work}/bg-ok`, { noFollow: true }), "the background task ran");
      assert(
        !(await exists(`${e.outside}/bg-bad`, { noFollow: true })),
        "the background task was confined",
      );

      assertStringIncludes(res("env"), "HOME=");
      assertNoSecret(res("env"), "env");
      assertEquals(res("config"), `<system>Command executed successfully (${sandbox}).</system>`);
      assertNoSecret(res("creds"), "the credentials dir");
      assertStringIncludes(res("environ"), "No such file or directory");
      assertNoSecret(res("environ"), "/proc/<agent pid>/environ");
      assert(!res("net").includes("net-connected"), res("net"));
      assertStringIncludes(res("net"), "Command failed with exit code: 1");
    } finally {
      srv.close();
      await e.cleanup();
    }
  },
});

Deno.test({
  name: NEEDS_BWRAP[2],
  ignore: !HAVE_BWRAP,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const e = await e2eDirs();
    const srv = listener();
    try {
      await writeConfig(e, attempts(e, srv.port));
      const r = await runKimi(e, ["-A"]);
      assertEquals(r.code, 0, r.stderr);
      const res = (id: string) => r.results.get(id) ?? `<no result for ${id}>`;
      assertEquals(res("outside"), "<system>Command executed successfully.</system>");
      assert(await exists(`${e.outside}/bad`, { noFollow: true }));
      assert(await exists(`${e.outside}/bg-bad`, { noFollow: true }));
      assertStringIncludes(res("config"), FAKE_CONFIG_KEY);
      assertStringIncludes(res("creds"), FAKE_TOKEN);
      // Not confined, but in a pid namespace of its own: kimi's /proc entry is not there.
      assertStringIncludes(res("environ"), "No such file or directory");
      assertNoSecret(res("environ"), "environ");
      assertStringIncludes(res("net"), "net-connected");
      // The child environment is filtered with or without confinement.
      assertNoSecret(res("env"), "env");
    } finally {
      srv.close();
      await e.cleanup();
    }
  },
});

Deno.test({
  name:
    "e2e: Shell fails closed when bwrap is unavailable; require_shell_confinement = false opts out",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const e = await e2eDirs();
    try {
      const perms = [
        "--allow-read",
        "--allow-env",
        `--allow-write=${e.work},${e.share}`,
        "--allow-run",
      ];
      const noBwrap = { [BWRAP_PATH_ENV]: `${e.root}/no-such-bwrap` };
      const script = [toolCallLine("t1", "Shell", { command: `touch ${e.work}/x` }), "text: done"];
      // The default fails closed: no sandbox setting at all.
      await writeConfig(e, script);
      const refused = await runKimi(e, perms, noBwrap);
      assertEquals(refused.code, 0, refused.stderr);
      const text = refused.results.get("t1") ?? "";
      assertStringIncludes(text, "Shell commands must run confined");
      assertStringIncludes(text, "apt-get install bubblewrap");
      assertStringIncludes(text, "sandbox.require_shell_confinement = false");
      assert(!(await exists(`${e.work}/x`, { noFollow: true })), "the command must not run");

      // Opted out: the command runs unconfined, and kimi says so once on stderr.
      await writeConfig(e, script, { sandbox: { require_shell_confinement: false } });
      const warned = await runKimi(e, perms, noBwrap);
      assertEquals(warned.code, 0, warned.stderr);
      assertEquals(warned.results.get("t1"), "<system>Command executed successfully.</system>");
      const line = "kimi: shell commands are not confined: bubblewrap (bwrap) was not found. " +
        "Install it (e.g. apt-get install bubblewrap) to confine them.";
      assertEquals(warned.stderr.split(line).length - 1, 1, warned.stderr);
      assert(await exists(`${e.work}/x`, { noFollow: true }));
    } finally {
      await e.cleanup();
    }
  },
});

async function kimiInfo(e: E2E, permissions: string[], json: boolean): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...permissions, MAIN_TS, "info", ...(json ? ["--json"] : [])],
    cwd: e.work,
    clearEnv: true,
    env: {
      HOME: e.home,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test({
  name: NEEDS_BWRAP[3],
  ignore: !HAVE_BWRAP,
  async fn() {
    const e = await e2eDirs();
    try {
      const narrow = ["--allow-read", "--allow-env", `--allow-write=${e.work}`, "--allow-run"];
      const confined = JSON.parse(await kimiInfo(e, narrow, true)).shell_confinement;
      assertEquals(confined, {
        shell: "confined",
        required: true,
        confined: true,
        needed: true,
        bwrap: BWRAP,
        reason: "write access is limited and network access is limited",
        description: `sandboxed: writes only to ${e.work} and a private /tmp; network off`,
        writable: [e.work],
        network: false,
        secrets_hidden: true,
      });
      const text = await kimiInfo(e, narrow, false);
      assertStringIncludes(text, `shell confinement: on (sandboxed: writes only to ${e.work}`);
      const open = JSON.parse(await kimiInfo(e, ["-A"], true)).shell_confinement;
      assertEquals(open.confined, false);
      assertEquals(open.needed, false);
      assertEquals(open.secrets_hidden, false);
      const openText = await kimiInfo(e, ["-A"], false);
      assertStringIncludes(openText, "shell confinement: off (the run may write anywhere");
      assertStringIncludes(openText, "hiding them needs bubblewrap (bwrap) confinement");
    } finally {
      await e.cleanup();
    }
  },
});

Deno.test({
  name: "bwrapArgv: a project's rules file cannot be written, replaced or created from inside",
  ignore: !HAVE_BWRAP,
  async fn() {
    const root = await tempDir("/var/tmp");
    try {
      const share = `${root}/share`;
      await Deno.mkdir(share);
      const run = async (work: string, script: string) => {
        const plan = planConfinement({
          workDir: work,
          additionalDirs: [],
          shareDir: share,
          scope: fakeScope({ writable: [work], net: false }),
        });
        const argv = bwrapArgv(plan, ["bash", "-c", script], {
          cwd: work,
          shareDir: share,
          bwrap: BWRAP!,
          controlPaths: projectControlPaths(work),
        });
        const out = await new Deno.Command(argv[0], { args: argv.slice(1), stderr: "piped" })
          .output();
        assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
        return new TextDecoder().decode(out.stdout);
      };
      // The file exists: every way of changing it fails, the rest of the work dir is writable.
      const work = `${root}/work`;
      await Deno.mkdir(`${work}/.kimi`, { recursive: true });
      await Deno.writeTextFile(`${work}/.kimi/config.toml`, "# rules\n");
      const text = await run(
        work,
        [
          "echo evil >> .kimi/config.toml 2>/dev/null || echo append-denied",
          "cp /dev/null .kimi/config.toml 2>/dev/null || echo cp-denied",
          "mv .kimi .kimi-old 2>/dev/null || echo rename-denied",
          "touch .kimi/other 2>/dev/null || echo sibling-denied",
          "ln -sf /tmp/x .kimi/config.toml 2>/dev/null || echo ln-denied",
          "echo ok > notes.txt && echo work-writable",
        ].join("\n"),
      );
      assertEquals(text.trim().split("\n"), [
        "append-denied",
        "cp-denied",
        "rename-denied",
        "sibling-denied",
        "ln-denied",
        "work-writable",
      ]);
      assertEquals(await Deno.readTextFile(`${work}/.kimi/config.toml`), "# rules\n");
      // Neither the file nor its folder exists: they cannot be created.
      const bare = `${root}/bare`;
      await Deno.mkdir(bare);
      const created = await run(
        bare,
        "mkdir -p .kimi 2>/dev/null; echo '[permission]' > .kimi/config.toml 2>/dev/null || " +
          "echo create-denied",
      );
      assertEquals(created.trim(), "create-denied");
      assert(!(await exists(`${bare}/.kimi/config.toml`, { noFollow: true })));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "bwrapArgv: without the network, host services on Unix sockets outside the work dir are unreachable",
  ignore: !HAVE_BWRAP,
  async fn() {
    const root = await tempDir("/var/tmp");
    const servers: Deno.Listener[] = [];
    try {
      const work = `${root}/work`;
      const share = `${root}/share`;
      const home = `${root}/home/.docker/run`;
      for (const d of [work, share, home]) await Deno.mkdir(d, { recursive: true });
      // A rootless docker's socket in the home dir, and the project's own socket.
      const outside = `${home}/docker.sock`;
      const inside = `${work}/app.sock`;
      for (const path of [outside, inside]) {
        const l = Deno.listen({ transport: "unix", path });
        servers.push(l);
        (async () => {
          for await (const conn of l) {
            await conn.write(new TextEncoder().encode("hello\n")).catch(() => {});
            conn.close();
          }
        })();
      }
      const plan = planConfinement({
        workDir: work,
        additionalDirs: [],
        shareDir: share,
        scope: fakeScope({ writable: [work], net: false }),
      });
      // A client: Deno itself (no imports: nothing to download), its cache on the private /tmp.
      const client = "const c = await Deno.connect({ transport: 'unix', path: Deno.args[0] }); " +
        "const b = new Uint8Array(16); const n = await c.read(b); " +
        "console.log(new TextDecoder().decode(b.subarray(0, n ?? 0)).trim());";
      const probe = (path: string) =>
        `DENO_DIR=/tmp/deno-dir DENO_NO_UPDATE_CHECK=1 ${Deno.execPath()} eval --quiet ` +
        `"${client}" ${path} 2>/dev/null || echo refused`;
      const argv = bwrapArgv(plan, ["bash", "-c", `${probe(outside)}; ${probe(inside)}`], {
        cwd: work,
        shareDir: share,
        bwrap: BWRAP!,
      });
      const out = await new Deno.Command(argv[0], { args: argv.slice(1), stderr: "piped" })
        .output();
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      assertEquals(new TextDecoder().decode(out.stdout).trim().split("\n"), ["refused", "hello"]);
      // With the network on, the same socket stays reachable (only control sockets are hidden).
      const netPlan = planConfinement({
        workDir: work,
        additionalDirs: [],
        shareDir: share,
        scope: fakeScope({ writable: [work], net: true }),
      });
      const netArgv = bwrapArgv(netPlan, ["bash", "-c", probe(outside)], {
        cwd: work,
        shareDir: share,
        bwrap: BWRAP!,
      });
      const netOut = await new Deno.Command(netArgv[0], { args: netArgv.slice(1) }).output();
      assertEquals(new TextDecoder().decode(netOut.stdout).trim(), "hello");
    } finally {
      for (const l of servers) l.close();
      await Deno.remove(root, { recursive: true });
    }
  },
});
