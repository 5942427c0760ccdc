import { join } from "node:path";
import { assertEquals, assertNotEquals, assertThrows } from "../../helpers/assert.ts";
import { isGitUrl, isZipUrl, parseGitUrl } from "../../../lib/plugins/source.ts";
import { parseToolManifest, parseToolSpec, PluginError } from "../../../lib/plugins/manifest.ts";
import { pluginDir } from "../../../lib/plugins/install.ts";
import { contentHash } from "../../../lib/plugins/store.ts";

Deno.test("plugin sources: zip URLs and git URLs are told apart as the reference does", () => {
  assertEquals(isZipUrl("https://github.com/o/r/archive/refs/heads/main.zip"), true);
  assertEquals(isZipUrl("https://x.test/p.ZIP?token=1"), true);
  assertEquals(isZipUrl("https://x.test/p.zip.html"), false);
  assertEquals(isZipUrl("ftp://x.test/p.zip"), false);
  assertEquals(isGitUrl("https://github.com/org/repo"), true);
  assertEquals(isGitUrl("https://gitlab.com/org/repo/-/tree/main/p"), true);
  assertEquals(isGitUrl("git@github.com:org/repo.git/p"), true);
  assertEquals(isGitUrl("https://example.com/org/repo.git"), true);
  assertEquals(isGitUrl("https://example.com/some/page"), false);
  assertEquals(isGitUrl("./relative/dir"), false);
});

Deno.test("plugin sources: git URL forms give the clone URL, branch and subpath", () => {
  assertEquals(parseGitUrl("https://github.com/org/repo/tree/develop/packages/p"), {
    cloneUrl: "https://github.com/org/repo",
    branch: "develop",
    subpath: "packages/p",
  });
  assertEquals(parseGitUrl("git@github.com:org/repo.git/p"), {
    cloneUrl: "git@github.com:org/repo.git",
    branch: null,
    subpath: "p",
  });
  assertEquals(parseGitUrl("https://gitlab.com/org/repo/-/tree/main/plugins/x/"), {
    cloneUrl: "https://gitlab.com/org/repo",
    branch: "main",
    subpath: "plugins/x",
  });
  assertEquals(parseGitUrl("https://github.com/org/repo/sub"), {
    cloneUrl: "https://github.com/org/repo",
    branch: null,
    subpath: "sub",
  });
  assertEquals(parseGitUrl("https://example.com/org/repo.git"), {
    cloneUrl: "https://example.com/org/repo.git",
    branch: null,
    subpath: "",
  });
  assertEquals(parseGitUrl("https://github.com/org").cloneUrl, "https://github.com/org");
});

Deno.test("plugin.json: the reference's messages for missing fields, bad JSON and inject", () => {
  const msg = (text: string) => {
    try {
      parseToolManifest(text, "/p/plugin.json");
      return "";
    } catch (err) {
      if (!(err instanceof PluginError)) throw err;
      return err.message;
    }
  };
  assertEquals(msg('{"version": "1"}'), "Missing required field 'name' in /p/plugin.json");
  assertEquals(msg('{"name": "x"}'), "Missing required field 'version' in /p/plugin.json");
  assertEquals(
    msg('{"name": "x", "version": "1", "inject": {"a": "api_key"}}'),
    "'inject' requires 'config_file' in /p/plugin.json",
  );
  assertEquals(msg("[1]"), "Invalid plugin.json schema in /p/plugin.json: expected a JSON object");
  assertEquals(msg("{").startsWith("Failed to read /p/plugin.json: "), true);
  const ok = parseToolManifest('{"name": "x", "version": "1", "extra": 1}', "/p/plugin.json");
  assertEquals([ok.description, ok.tools, ok.inject], ["", [], {}]);
});

Deno.test("plugin names may not leave the plugins root", () => {
  assertEquals(pluginDir("/r", "ok-name"), "/r/ok-name");
  for (const bad of ["..", "../x", "a/b", ".hidden", "", "/abs", "installed.json"]) {
    assertEquals(pluginDir("/r", bad), null, bad);
  }
  assertThrows(() => parseToolManifest("", "/p/plugin.json"), PluginError);
});

Deno.test("content hash: changes with a file's bytes, a new file or a mode change", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "a.sh"), "echo a\n");
    const h1 = await contentHash(dir);
    assertEquals(await contentHash(dir), h1);
    await Deno.writeTextFile(join(dir, "a.sh"), "echo b\n");
    const h2 = await contentHash(dir);
    assertNotEquals(h2, h1);
    await Deno.chmod(join(dir, "a.sh"), 0o755);
    const h3 = await contentHash(dir);
    assertNotEquals(h3, h2);
    await Deno.mkdir(join(dir, "sub"));
    await Deno.writeTextFile(join(dir, "sub", "b"), "");
    assertNotEquals(await contentHash(dir), h3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("plugin tool entries: a command is required and parameters must describe an object", () => {
  assertEquals(
    parseToolSpec({ name: "t", description: "d", command: ["sh", "x.sh"] }),
    { name: "t", description: "d", command: ["sh", "x.sh"], parameters: {} },
  );
  assertEquals(
    parseToolSpec({ name: "t", description: "d", command: [] }),
    "command: Too small: expected array to have >=1 items",
  );
  assertEquals(
    parseToolSpec({ name: "t", description: "d", command: ["x"], parameters: { type: "string" } }),
    'parameters: a tool\'s parameters must be a JSON Schema of type "object"',
  );
});
