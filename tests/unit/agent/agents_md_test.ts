import { join } from "node:path";
import { assert, assertEquals } from "../../helpers/assert.ts";
import {
  AGENTS_MD_MAX_BYTES,
  findProjectRoot,
  loadAgentsMd,
} from "../../../lib/agent/agents_md.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "agents_md_test_" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

const bytes = (s: string) => new TextEncoder().encode(s).length;

Deno.test("none found → empty string", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, ".git"));
    assertEquals(await loadAgentsMd(dir), "");
  });
});

Deno.test("project root is the nearest .git ancestor, else the work dir", async () => {
  await withTempDir(async (dir) => {
    const work = join(dir, "repo", "pkg", "sub");
    await Deno.mkdir(work, { recursive: true });
    assertEquals(await findProjectRoot(work), work);
    await Deno.mkdir(join(dir, "repo", ".git"));
    assertEquals(await findProjectRoot(work), join(dir, "repo"));
    await Deno.writeTextFile(join(dir, "repo", "pkg", ".git"), "gitdir: elsewhere\n");
    assertEquals(await findProjectRoot(work), join(dir, "repo", "pkg"));
  });
});

Deno.test("merge order root → leaf, .kimi first, AGENTS.md beats agents.md, prefixes", async () => {
  await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    const work = join(repo, "pkg", "sub");
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    await Deno.mkdir(work, { recursive: true });
    // Above the project root: must be ignored.
    await write(join(dir, "AGENTS.md"), "outside");
    await write(join(repo, "AGENTS.md"), "  root rules \n\n");
    await write(join(repo, "agents.md"), "shadowed lowercase");
    await write(join(repo, ".kimi", "AGENTS.md"), "root kimi");
    await write(join(repo, "pkg", "agents.md"), "pkg lowercase");
    await write(join(work, "AGENTS.md"), "   \n");
    await write(join(work, ".kimi", "AGENTS.md"), "leaf kimi");
    const merged = await loadAgentsMd(work);
    // Case-insensitive file systems see one file for AGENTS.md / agents.md.
    const caseSensitive = (await Deno.readTextFile(join(repo, "AGENTS.md"))).includes("root rules");
    assert(caseSensitive, "test needs a case-sensitive file system");
    assertEquals(
      merged,
      [
        `<!-- From: ${join(repo, ".kimi", "AGENTS.md")} -->\nroot kimi`,
        `<!-- From: ${join(repo, "AGENTS.md")} -->\nroot rules`,
        `<!-- From: ${join(repo, "pkg", "agents.md")} -->\npkg lowercase`,
        `<!-- From: ${join(work, ".kimi", "AGENTS.md")} -->\nleaf kimi`,
      ].join("\n\n"),
    );
  });
});

Deno.test("no .git: only the work dir itself is consulted", async () => {
  await withTempDir(async (dir) => {
    const work = join(dir, "w");
    await write(join(dir, "AGENTS.md"), "parent");
    await write(join(work, "AGENTS.md"), "mine");
    assertEquals(await loadAgentsMd(work), `<!-- From: ${join(work, "AGENTS.md")} -->\nmine`);
  });
});

Deno.test("32 KiB budget is allocated leaf-first: leaf whole, root truncated", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, ".git"));
    const work = join(dir, "leaf");
    const leafText = "L".repeat(20_000);
    const rootText = "R".repeat(20_000);
    await write(join(dir, "AGENTS.md"), rootText);
    await write(join(work, "AGENTS.md"), leafText);
    const merged = await loadAgentsMd(work);
    assertEquals(bytes(merged), AGENTS_MD_MAX_BYTES);
    const rootHeader = `<!-- From: ${join(dir, "AGENTS.md")} -->\n`;
    const leafHeader = `<!-- From: ${join(work, "AGENTS.md")} -->\n`;
    const rootKept = AGENTS_MD_MAX_BYTES - bytes(leafHeader) - leafText.length -
      bytes(rootHeader) - 2;
    assertEquals(merged, `${rootHeader}${"R".repeat(rootKept)}\n\n${leafHeader}${leafText}`);
  });
});

Deno.test("budget: an oversized leaf is truncated and shallower files are dropped", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, ".git"));
    const work = join(dir, "leaf");
    await write(join(dir, "AGENTS.md"), "root");
    // Multi-byte characters: truncation never splits one.
    await write(join(work, "AGENTS.md"), "é".repeat(20_000));
    const merged = await loadAgentsMd(work);
    const header = `<!-- From: ${join(work, "AGENTS.md")} -->\n`;
    const room = AGENTS_MD_MAX_BYTES - bytes(header);
    assertEquals(merged, header + "é".repeat(Math.floor(room / 2)));
    assert(bytes(merged) <= AGENTS_MD_MAX_BYTES);
  });
});
