/**
 * kimi runs by URL: the raw source (with the repository's `deno.json` as import map) and the
 * bundle (`deno task bundle`, no import map, no config, no npm) are served from 127.0.0.1 and run
 * from a fresh, empty `DENO_DIR` with the network limited to 127.0.0.1: `--version`, a scripted
 * print turn, a shell deny rule (tree-sitter's wasm parser), a wire `initialize` and an ACP
 * `initialize`.
 *
 * @module
 */
import { bundle } from "../../scripts/bundle.ts";
import { VERSION } from "../../lib/version.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import {
  denoDir as denoDirPath,
  type KimiSandbox,
  kimiSandbox,
  toolCallLine,
} from "../helpers/kimi_process.ts";
import { type KimiUrlServer, serveKimi } from "../helpers/url_server.ts";
import { WireProcess } from "../helpers/wire_process.ts";

/** How one way of running kimi by URL is invoked. */
interface UrlProgram {
  name: string;
  /** Deno flags besides permissions (config / import map). */
  flags: (srv: KimiUrlServer) => string[];
  /** The entry URL. */
  main: (srv: KimiUrlServer) => string;
  /** Whether this run may install npm packages (from the 127.0.0.1 mirror). */
  usesNpm: boolean;
}

const PROGRAMS: UrlProgram[] = [
  {
    name: "source",
    flags: (srv) => [`--import-map=${srv.repoUrl}deno.json`, "--unstable-lazy-dynamic-imports"],
    main: (srv) => `${srv.repoUrl}main.ts`,
    usesNpm: true,
  },
  {
    name: "bundle",
    flags: () => ["--no-config"],
    main: (srv) => `${srv.bundleUrl}main.js`,
    usesNpm: false,
  },
];

interface Fixture {
  srv: KimiUrlServer;
  sb: KimiSandbox;
  bundleDir: string;
  config: string;
}

async function setUp(): Promise<Fixture> {
  const sb = await kimiSandbox();
  const bundleDir = `${sb.root}/bundle`;
  await bundle({ outDir: bundleDir });
  const srv = await serveKimi({ bundleDir });
  const config = await sb.scriptedConfig(["text: Hello from a URL.", "text: second"]);
  return { srv, sb, bundleDir, config };
}

function command(
  f: Fixture,
  p: UrlProgram,
  denoDir: string,
  args: string[],
  stdin: "piped" | "null" = "null",
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      `--allow-write=${f.sb.root}`,
      ...p.flags(f.srv),
      p.main(f.srv),
      ...args,
    ],
    cwd: f.sb.workDir,
    clearEnv: true,
    env: {
      HOME: f.sb.home,
      KIMI_SHARE_DIR: f.sb.shareDir,
      DENO_DIR: denoDir,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      // The source installs npm packages from the mirror; the bundle must not touch a registry
      // (a closed port would make any attempt fail).
      NPM_CONFIG_REGISTRY: p.usesNpm ? f.srv.npmUrl : "http://127.0.0.1:9/",
    },
    stdin,
    stdout: "piped",
    stderr: "piped",
  });
}

async function run(f: Fixture, p: UrlProgram, denoDir: string, args: string[]) {
  const out = await command(f, p, denoDir, args).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

for (const p of PROGRAMS) {
  Deno.test(`url run (${p.name}): --version, a print turn, shell rules, wire and ACP initialize from an empty DENO_DIR`, async () => {
    const f = await setUp();
    const denoDir = `${f.sb.root}/deno-dir`;
    await Deno.mkdir(denoDir);
    try {
      const version = await run(f, p, denoDir, ["--version"]);
      assertEquals([version.code, version.stdout], [0, `kimi, version ${VERSION}\n`]);

      const print = await run(f, p, denoDir, [
        "--config-file",
        f.config,
        "--print",
        "--final-message-only",
        "-p",
        "hi",
      ]);
      assertEquals(print.code, 0, print.stderr);
      assertEquals(print.stdout.trim(), "Hello from a URL.");
      assertEquals((await f.sb.sessionDirs()).length, 1);

      // Shell permission rules parse the command line with tree-sitter (a wasm package): a deny
      // rule on one command of `echo && rm` refuses it only when the parser loaded.
      await Deno.writeTextFile(`${f.sb.workDir}/keep.txt`, "x");
      const ruled = JSON.parse(
        await Deno.readTextFile(
          await f.sb.scriptedConfig([
            toolCallLine("tc-1", "Shell", { command: "echo a && rm -f keep.txt" }),
            "text: done",
          ]),
        ),
      );
      ruled.permission = { rules: [{ pattern: "Shell(rm *)", decision: "deny" }] };
      const ruledConfig = `${f.sb.root}/ruled.json`;
      await Deno.writeTextFile(ruledConfig, JSON.stringify(ruled));
      const denied = await run(f, p, denoDir, [
        "--config-file",
        ruledConfig,
        "--yolo",
        "--print",
        "--output-format",
        "text",
        "-p",
        "go",
      ]);
      assertEquals(denied.code, 0, denied.stderr);
      assertStringIncludes(denied.stdout, "refused by the permission rule `Shell(rm *)`");
      assertEquals(await Deno.readTextFile(`${f.sb.workDir}/keep.txt`), "x");

      const child = command(f, p, denoDir, ["--config-file", f.config, "--wire"], "piped").spawn();
      const wire = new WireProcess(child);
      try {
        const { response } = await wire.call("init", "initialize", { protocol_version: "1.10" });
        assertEquals(response.result.protocol_version, "1.10");
        assertEquals(response.result.server, { name: "Kimi Code CLI", version: VERSION });
      } finally {
        child.kill();
        await child.status;
        await wire.stderr;
      }

      // `kimi acp` (the ACP SDK) answers initialize.
      const acp = command(f, p, denoDir, ["acp"], "piped").spawn();
      try {
        const w = acp.stdin.getWriter();
        await w.write(new TextEncoder().encode(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: 1, clientCapabilities: {} },
          }) + "\n",
        ));
        const reader = acp.stdout.pipeThrough(new TextDecoderStream()).getReader();
        let text = "";
        while (!text.includes("\n")) {
          const { value, done } = await reader.read();
          if (done) break;
          text += value;
        }
        const reply = JSON.parse(text.split("\n")[0]);
        assertEquals([reply.id, reply.result.agentInfo.name], [1, "Kimi Code CLI"]);
        await w.close();
        reader.releaseLock();
      } finally {
        acp.kill();
        await acp.status;
        await acp.stdout.cancel().catch(() => {});
        await acp.stderr.cancel().catch(() => {});
      }

      // Everything came from the server, into the fresh cache.
      assert(await exists(`${denoDir}/remote`), "modules were fetched into the fresh DENO_DIR");
      const npmRequests = f.srv.requests.filter((r) => r.startsWith("/npm/"));
      if (p.usesNpm) {
        assert(npmRequests.includes("/npm/openai") || npmRequests.includes("/npm/commander"));
      } else {
        assertEquals(npmRequests, []);
        const npmDir = (await exists(`${denoDir}/npm`))
          ? await Array.fromAsync(Deno.readDir(`${denoDir}/npm`), (e) => e.name)
          : [];
        assertEquals(npmDir, [], "the bundle installed npm packages");
        assert(f.srv.requests.every((r) => r.startsWith("/bundle/")), f.srv.requests.join(" "));
        // Nothing of the build machine (its Deno cache path) is served.
        for await (const e of Deno.readDir(f.bundleDir)) {
          if (!e.name.endsWith(".js")) continue;
          const text = await Deno.readTextFile(`${f.bundleDir}/${e.name}`);
          assert(!text.includes(denoDirPath()), `${e.name} names the build machine's cache`);
          // zod's translations are left out (the program only reads zod's members by name,
          // so the bundler drops what it never uses); English stays as zod's default.
          assert(
            !/zod\/[^/\s]+\/v4\/locales\/fr\.js/.test(text),
            `${e.name} bundles zod's locales`,
          );
        }
      }
    } finally {
      await f.srv.close();
      await f.sb.cleanup();
    }
  });
}
