/**
 * `kimi plugin install|list|info|remove|enable|disable` through main.ts: every source form
 * (directory, local zip, zip URL on 127.0.0.1, git via `git daemon` and `file://` with a
 * subpath and a branch) with the exact output, and bad input that installs nothing and loses
 * nothing.
 */
import { join } from "node:path";
import { Zip, ZipDeflate, zipSync } from "fflate";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox } from "../helpers/kimi_process.ts";
import {
  copyDir,
  EXAMPLE_PLUGIN,
  git,
  serveFiles,
  startGitDaemon,
  writeToolPlugin,
  zipDir,
} from "../helpers/plugin_fixtures.ts";
import { VERSION } from "../../lib/version.ts";

const INSTALLED_GREETER =
  `Installed plugin 'greeter' v1.0.0\n  runtime: host=kimi-code, version=${VERSION}\n`;
const NO_PROVIDER_WARNING =
  "Warning: No LLM provider configured. Plugins requiring API key injection will fail. " +
  "Run 'kimi login' or configure a provider first.\n";

/** A sandbox whose default config has a provider with an API key (for `inject`). */
async function sandboxWithKey(): Promise<KimiSandbox> {
  const sb = await kimiSandbox();
  await Deno.mkdir(sb.shareDir, { recursive: true });
  await Deno.writeTextFile(
    join(sb.shareDir, "config.toml"),
    [
      'default_model = "m"',
      "[models.m]",
      'provider = "p"',
      'model = "x"',
      "max_context_size = 1000",
      "[providers.p]",
      'type = "openai_legacy"',
      'base_url = "http://127.0.0.1:9/v1"',
      'api_key = "sk-plugin-test"',
      "",
    ].join("\n"),
  );
  return sb;
}

async function listing(sb: KimiSandbox): Promise<string> {
  const r = await sb.run(["plugin", "list"]);
  assertEquals(r.code, 0, r.stderr);
  return r.stdout;
}

Deno.test("plugin: install from a directory, list, info, disable, enable, remove (exact output)", async () => {
  const sb = await sandboxWithKey();
  try {
    assertEquals(await listing(sb), "No plugins installed.\n");
    const r = await sb.run(["plugin", "install", EXAMPLE_PLUGIN]);
    assertEquals([r.code, r.stdout, r.stderr], [0, INSTALLED_GREETER, ""]);
    assertEquals(await listing(sb), "  greeter v1.0.0 (installed)\n");
    const dir = join(sb.shareDir, "plugins", "greeter");
    // the key was injected into the installed copy only
    assertEquals(JSON.parse(await Deno.readTextFile(join(dir, "config.json"))), {
      llm: { api_key: "sk-plugin-test" },
    });
    assertEquals(JSON.parse(await Deno.readTextFile(join(EXAMPLE_PLUGIN, "config.json"))), {
      llm: { api_key: "" },
    });
    const info = await sb.run(["plugin", "info", "greeter"]);
    assertEquals(info.code, 0, info.stderr);
    assertEquals(
      info.stdout,
      [
        "Name:        greeter",
        "Version:     1.0.0",
        "Description: Greets people and counts words: a small example plugin for kimi.",
        "Config file: config.json",
        "Inject:      llm.api_key <- api_key",
        `Runtime:     host=kimi-code, version=${VERSION}`,
        "Status:      enabled",
        "",
      ].join("\n"),
    );
    const off = await sb.run(["plugin", "disable", "greeter"]);
    assertEquals(
      [off.code, off.stdout],
      [0, "Disabled plugin 'greeter'. It applies to new sessions.\n"],
    );
    assertEquals(await listing(sb), "  greeter v1.0.0 (installed) [disabled]\n");
    const on = await sb.run(["plugin", "enable", "greeter"]);
    assertEquals([on.code, on.stdout], [
      0,
      "Enabled plugin 'greeter'. It applies to new sessions.\n",
    ]);
    assertEquals(await listing(sb), "  greeter v1.0.0 (installed)\n");
    const unknown = await sb.run(["plugin", "enable", "nope"]);
    assertEquals(
      [unknown.code, unknown.stderr],
      [1, "Error: Plugin 'nope' is not installed (see kimi plugin list)\n"],
    );
    const rm = await sb.run(["plugin", "remove", "greeter"]);
    assertEquals([rm.code, rm.stdout], [0, "Removed plugin 'greeter'\n"]);
    assertEquals(await listing(sb), "No plugins installed.\n");
    const again = await sb.run(["plugin", "remove", "greeter"]);
    assertEquals(
      [again.code, again.stderr],
      [1, `Error: Plugin 'greeter' not found in ${join(sb.shareDir, "plugins")}\n`],
    );
    const noInfo = await sb.run(["plugin", "info", "greeter"]);
    assertEquals([noInfo.code, noInfo.stderr], [1, "Error: Plugin 'greeter' not found\n"]);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("plugin: install from a local zip and from a zip URL on 127.0.0.1", async () => {
  const sb = await sandboxWithKey();
  const server = serveFiles({
    "/dl/greeter.zip": await zipDir(EXAMPLE_PLUGIN, "greeter-main/"),
  });
  try {
    const zip = join(sb.root, "greeter.zip");
    await Deno.writeFile(zip, await zipDir(EXAMPLE_PLUGIN));
    const r = await sb.run(["plugin", "install", zip]);
    assertEquals([r.code, r.stdout, r.stderr], [
      0,
      `Extracting greeter.zip...\n${INSTALLED_GREETER}`,
      "",
    ]);
    const url = `${server.url}/dl/greeter.zip?ref=main`;
    const u = await sb.run(["plugin", "install", url]);
    assertEquals([u.code, u.stdout, u.stderr], [
      0,
      `Downloading ${url}...\n${INSTALLED_GREETER}`,
      "",
    ]);
    assertEquals(await listing(sb), "  greeter v1.0.0 (installed)\n");
    const missing = `${server.url}/dl/missing.zip`;
    const m = await sb.run(["plugin", "install", missing]);
    assertEquals(m.code, 1);
    assertEquals(
      m.stderr,
      `Error: download failed: HTTP 404 Not Found for ${missing}\n`,
    );
  } finally {
    await server.close();
    await sb.cleanup();
  }
});

Deno.test("plugin: install from git (git daemon with tree/<branch>/<subpath>, file:// .git/<subpath>, a repository of several plugins)", async () => {
  const sb = await sandboxWithKey();
  const base = join(sb.root, "git");
  const repo = join(base, "org", "repo");
  await Deno.mkdir(repo, { recursive: true });
  await git(repo, "init", "-q");
  await Deno.writeTextFile(join(repo, "README.md"), "main branch\n");
  await git(repo, "add", ".");
  await git(repo, "commit", "-qm", "main");
  await git(repo, "checkout", "-qb", "dev");
  await copyDir(EXAMPLE_PLUGIN, join(repo, "plugins", "greeter"));
  await git(repo, "add", ".");
  await git(repo, "commit", "-qm", "dev");
  await git(repo, "checkout", "-q", "main");
  const daemon = await startGitDaemon(base);
  try {
    const url = `${daemon.url}/org/repo/tree/dev/plugins/greeter`;
    const r = await sb.run(["plugin", "install", url]);
    assertEquals(
      [r.code, r.stdout, r.stderr],
      [0, `Cloning ${daemon.url}/org/repo...\n${INSTALLED_GREETER}`, ""],
    );
    // file:// with `.git/<subpath>` (a bare clone of the dev branch)
    const bare = join(base, "repo.git");
    await git(base, "clone", "-q", "--bare", "--branch", "dev", repo, bare);
    const f = await sb.run(["plugin", "install", `file://${bare}/plugins/greeter`]);
    assertEquals([f.code, f.stdout], [0, `Cloning file://${bare}...\n${INSTALLED_GREETER}`]);
    // a subpath that does not exist / holds no plugin.json
    const nf = await sb.run(["plugin", "install", `file://${bare}/plugins/nope`]);
    assertEquals([nf.code, nf.stderr], [
      1,
      "Error: subpath 'plugins/nope' not found in repository\n",
    ]);
    const np = await sb.run(["plugin", "install", `file://${bare}/plugins`]);
    assertEquals([np.code, np.stderr], [1, "Error: no plugin.json in 'plugins'\n"]);
    // a repository with several plugins at its top lists them
    const multi = join(base, "multi");
    await Deno.mkdir(multi);
    await git(multi, "init", "-q");
    await writeToolPlugin(join(multi, "beta"), {
      name: "beta",
      tools: [{ name: "b", script: "echo b" }],
    });
    await writeToolPlugin(join(multi, "alpha"), {
      name: "alpha",
      tools: [{ name: "a", script: "echo a" }],
    });
    await git(multi, "add", ".");
    await git(multi, "commit", "-qm", "two");
    await git(base, "clone", "-q", "--bare", multi, join(base, "multi.git"));
    const m = await sb.run(["plugin", "install", `file://${base}/multi.git`]);
    assertEquals(m.code, 1);
    assertEquals(
      m.stderr,
      "Error: No plugin.json at repository root. Available plugins:\n  - alpha\n  - beta\n" +
        "Use: kimi plugin install <url>/<plugin-name>\n",
    );
    // a repository that does not exist
    const gone = await sb.run(["plugin", "install", `${daemon.url}/org/nope/tree/dev/x`]);
    assertEquals(gone.code, 1);
    assert(gone.stderr.startsWith("Error: git clone failed: "), gone.stderr);
    assertEquals(await listing(sb), "  greeter v1.0.0 (installed)\n");
  } finally {
    await daemon.close();
    await sb.cleanup();
  }
});

/** A zip whose one member inflates to more than the unpack cap (deflated zeros). */
function zipBomb(): Uint8Array {
  const parts: Uint8Array[] = [];
  const zip = new Zip((err, chunk) => {
    if (err) throw err;
    parts.push(chunk);
  });
  const member = new ZipDeflate("greeter/zeros.bin", { level: 1 });
  zip.add(member);
  const mb = new Uint8Array(1024 * 1024);
  for (let i = 0; i < 520; i++) member.push(mb, i === 519);
  zip.end();
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

Deno.test("plugin: bad input gets a precise error, installs nothing and keeps the installed version", async () => {
  const sb = await sandboxWithKey();
  try {
    const r0 = await sb.run(["plugin", "install", EXAMPLE_PLUGIN]);
    assertEquals(r0.code, 0, r0.stderr);
    const stateFile = join(sb.shareDir, "plugins", "installed.json");
    const before = await Deno.readTextFile(stateFile);
    const bad = (name: string) => join(sb.root, "bad", name);
    const install = (target: string) => sb.run(["plugin", "install", target]);

    await Deno.mkdir(bad("json"), { recursive: true });
    await Deno.writeTextFile(join(bad("json"), "plugin.json"), "{ not json");
    const malformed = await install(bad("json"));
    assertEquals(malformed.code, 1);
    assert(
      malformed.stderr.startsWith(`Error: Failed to read ${join(bad("json"), "plugin.json")}: `),
      malformed.stderr,
    );

    await Deno.mkdir(bad("noname"), { recursive: true });
    await Deno.writeTextFile(join(bad("noname"), "plugin.json"), '{"version": "1"}');
    const noName = await install(bad("noname"));
    assertEquals(
      [noName.code, noName.stderr],
      [1, `Error: Missing required field 'name' in ${join(bad("noname"), "plugin.json")}\n`],
    );

    await writeToolPlugin(bad("nocommand"), {
      name: "nocommand",
      tools: [],
      manifest: { tools: [{ name: "t", description: "no command" }] },
    });
    const noCommand = await install(bad("nocommand"));
    assertEquals([noCommand.code, noCommand.stderr], [
      1,
      `Error: Invalid plugin.json schema in ${join(bad("nocommand"), "plugin.json")}: tools.0 ` +
      "(t): command: Invalid input: expected array, received undefined\n",
    ]);

    await writeToolPlugin(bad("escape"), { name: "../../escaped", tools: [] });
    const escape = await install(bad("escape"));
    assertEquals([escape.code, escape.stderr], [1, "Error: Invalid plugin name: ../../escaped\n"]);

    // a reinstall of greeter that fails (its config file is missing): the old one stays
    await copyDir(EXAMPLE_PLUGIN, bad("greeter2"));
    await Deno.remove(join(bad("greeter2"), "config.json"));
    const broken = await install(bad("greeter2"));
    assertEquals(broken.code, 1);
    assert(broken.stderr.startsWith("Error: Config file not found: "), broken.stderr);

    const unsafe = join(sb.root, "unsafe.zip");
    await Deno.writeFile(
      unsafe,
      zipSync({ "plugin.json": new TextEncoder().encode("{}"), "../evil.txt": new Uint8Array(1) }),
    );
    const u = await install(unsafe);
    assertEquals([u.code, u.stderr], [1, "Error: zip contains unsafe path: ../evil.txt\n"]);
    assertEquals(await Deno.stat(join(sb.root, "evil.txt")).catch(() => null), null);

    const notZip = join(sb.root, "not.zip");
    await Deno.writeTextFile(notZip, "hello");
    const nz = await install(notZip);
    assertEquals([nz.code, nz.stderr], [1, "Error: invalid zip archive: File is not a zip file\n"]);

    const big = join(sb.root, "big.zip");
    const f = await Deno.create(big);
    await f.truncate(2 * 1024 * 1024 * 1024);
    f.close();
    const b = await install(big);
    assertEquals(
      [b.code, b.stderr],
      [1, "Error: zip is too large: 2147483648 bytes (at most 104857600 bytes are accepted)\n"],
    );

    const bomb = join(sb.root, "bomb.zip");
    await Deno.writeFile(bomb, zipBomb());
    const bb = await install(bomb);
    assertEquals(
      [bb.code, bb.stderr],
      [1, "Error: zip unpacks to more than 536870912 bytes (refused as a zip bomb)\n"],
    );

    const nothing = join(sb.root, "nothing-here");
    const n = await install(nothing);
    assertEquals(
      [n.code, n.stderr],
      [1, `Error: ${nothing} is not a directory, zip file, zip URL, or git URL\n`],
    );

    // nothing was installed or lost; no staging dirs are left behind
    assertEquals(await listing(sb), "  greeter v1.0.0 (installed)\n");
    const entries = [];
    for await (const e of Deno.readDir(join(sb.shareDir, "plugins"))) entries.push(e.name);
    assertEquals(entries.sort(), ["greeter", "installed.json"]);
    assertEquals(await Deno.readTextFile(stateFile), before);
    assertStringIncludes(
      await Deno.readTextFile(join(sb.shareDir, "plugins", "greeter", "config.json")),
      "sk-plugin-test",
    );
  } finally {
    await sb.cleanup();
  }
});

Deno.test("plugin: install without a provider warns, and a plugin needing a key fails with the reference's message", async () => {
  const sb = await kimiSandbox();
  try {
    await writeToolPlugin(join(sb.root, "plain"), {
      name: "plain",
      tools: [{ name: "t", script: "echo t" }],
    });
    const r = await sb.run(["plugin", "install", join(sb.root, "plain")]);
    assertEquals([r.code, r.stderr], [0, NO_PROVIDER_WARNING]);
    assertStringIncludes(r.stdout, "Installed plugin 'plain' v0.1.0\n");
    const k = await sb.run(["plugin", "install", EXAMPLE_PLUGIN]);
    assertEquals(
      [k.code, k.stderr],
      [1, `${NO_PROVIDER_WARNING}Error: Host does not provide required inject key 'api_key'\n`],
    );
    assertEquals(await listing(sb), "  plain v0.1.0 (installed)\n");
  } finally {
    await sb.cleanup();
  }
});
