/**
 * The README's `deno install -g` commands work: from a checkout and from a URL (raw source and
 * bundle), for the full command and each permission profile. Each command is installed into a
 * temporary `DENO_INSTALL_ROOT`, then runs a scripted print turn and `kimi info --json` from a
 * directory with no `deno.json`, proving that the profile's scope was applied.
 *
 * @module
 */
import { bundle } from "../../scripts/bundle.ts";
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { assertEquals } from "../helpers/assert.ts";
import { denoDir, type KimiSandbox, kimiSandbox } from "../helpers/kimi_process.ts";
import { type KimiUrlServer, REPO_ROOT, serveKimi } from "../helpers/url_server.ts";

/** One install command from the README. */
interface InstallCase {
  /** Command name. */
  name: string;
  /** Profile the command runs under. */
  profile: "review" | "workspace" | "full";
  /** `deno install -g -f -n <name>` arguments after the name. */
  args: (srv: KimiUrlServer) => string[];
  /** Whether it is installed from a URL (fresh DENO_DIR, npm from the mirror). */
  fromUrl: boolean;
}

const LAUNCHER_PERMS = ["--allow-read", "--allow-env", "--allow-run"];

const CASES: InstallCase[] = [
  {
    name: "kimi",
    profile: "full",
    args: () => [
      "--config",
      `${REPO_ROOT}/deno.json`,
      "--no-prompt",
      DENO_V8_FLAGS_ARG,
      "-A",
      `${REPO_ROOT}/main.ts`,
    ],
    fromUrl: false,
  },
  ...(["review", "workspace", "full"] as const).map((profile): InstallCase => ({
    name: `kimi-${profile}`,
    profile,
    args: () => [
      "--config",
      `${REPO_ROOT}/deno.json`,
      "--no-prompt",
      ...LAUNCHER_PERMS,
      `${REPO_ROOT}/scripts/launch.ts`,
      "--",
      profile,
    ],
    fromUrl: false,
  })),
  {
    name: "kimi-url-source",
    profile: "full",
    args: (srv) => [
      "--import-map",
      `${srv.repoUrl}deno.json`,
      "--unstable-lazy-dynamic-imports",
      "--no-prompt",
      DENO_V8_FLAGS_ARG,
      "-A",
      `${srv.repoUrl}main.ts`,
    ],
    fromUrl: true,
  },
  {
    name: "kimi-url-source-workspace",
    profile: "workspace",
    args: (srv) => [
      "--import-map",
      `${srv.repoUrl}deno.json`,
      "--no-prompt",
      ...LAUNCHER_PERMS,
      `${srv.repoUrl}scripts/launch.ts`,
      "--",
      "workspace",
    ],
    fromUrl: true,
  },
  {
    name: "kimi-url-bundle",
    profile: "full",
    args: (srv) => [
      "--no-config",
      "--no-prompt",
      DENO_V8_FLAGS_ARG,
      "-A",
      `${srv.bundleUrl}main.js`,
    ],
    fromUrl: true,
  },
  {
    name: "kimi-url-bundle-review",
    profile: "review",
    args: (srv) => [
      "--no-config",
      "--no-prompt",
      ...LAUNCHER_PERMS,
      `${srv.bundleUrl}scripts/launch.js`,
      "--",
      "review",
    ],
    fromUrl: true,
  },
];

interface Env {
  sb: KimiSandbox;
  srv: KimiUrlServer;
  installRoot: string;
  urlDenoDir: string;
  config: string;
}

function childEnv(e: Env, fromUrl: boolean): Record<string, string> {
  const denoBin = Deno.execPath().replace(/\/[^/]+$/, "");
  return {
    HOME: e.sb.home,
    KIMI_SHARE_DIR: e.sb.shareDir,
    DENO_DIR: fromUrl ? e.urlDenoDir : denoDir(),
    DENO_INSTALL_ROOT: e.installRoot,
    // From a URL: a fresh cache, npm packages from the 127.0.0.1 mirror. From a checkout: the
    // shared cache, as a developer's machine would have it.
    ...(fromUrl ? { NPM_CONFIG_REGISTRY: e.srv.npmUrl } : {}),
    PATH: `${denoBin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    NO_COLOR: "1",
  };
}

async function exec(cmd: string, args: string[], env: Record<string, string>, cwd: string) {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("install: deno install -g from a checkout and from a URL, full command and every profile", async (t) => {
  const sb = await kimiSandbox();
  const bundleDir = `${sb.root}/bundle`;
  await bundle({ outDir: bundleDir });
  const srv = await serveKimi({ bundleDir });
  const e: Env = {
    sb,
    srv,
    installRoot: `${sb.root}/install`,
    urlDenoDir: `${sb.root}/deno-dir`,
    config: await sb.scriptedConfig(Array(CASES.length).fill("text: Hello from an install.")),
  };
  try {
    for (const c of CASES) {
      await t.step(`${c.name} (${c.profile}${c.fromUrl ? ", from a URL" : ""})`, async () => {
        const env = childEnv(e, c.fromUrl);
        const install = await exec(
          Deno.execPath(),
          ["install", "-g", "-f", "-n", c.name, ...c.args(srv)],
          env,
          sb.workDir,
        );
        assertEquals(install.code, 0, install.stderr);
        const bin = `${e.installRoot}/bin/${c.name}`;
        // kimi's V8 settings: baked into the command, or added by the launcher it runs
        const shim = await Deno.readTextFile(bin);
        const launcher = c.args(srv).some((a) => /\/launch\.(ts|js)$/.test(a));
        assertEquals(shim.includes(DENO_V8_FLAGS_ARG), !launcher, shim);

        const turn = await exec(
          bin,
          ["--config-file", e.config, "--print", "--final-message-only", "-p", "hi"],
          env,
          sb.workDir,
        );
        assertEquals([turn.code, turn.stdout.trim()], [0, "Hello from an install."], turn.stderr);

        const info = await exec(bin, ["info", "--json"], env, sb.workDir);
        assertEquals(info.code, 0, info.stderr);
        const write = JSON.parse(info.stdout).scope.write;
        if (c.profile === "full") assertEquals(write.level, "all");
        else if (c.profile === "review") {
          assertEquals([write.level, write.granted], ["partial", [sb.shareDir]]);
        } else {
          assertEquals(write.level, "partial");
          assertEquals(write.granted.includes(sb.workDir), true, JSON.stringify(write));
        }
      });
    }
  } finally {
    await srv.close();
    await sb.cleanup();
  }
});
