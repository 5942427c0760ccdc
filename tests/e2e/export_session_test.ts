import { unzipSync } from "fflate";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";

Deno.test("kimi export zips the last session, its logs and a manifest", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: hello"]);
    const run = await sb.run(["--print", "--config-file", config, "-p", "hi"]);
    assertEquals(run.code, 0, run.stderr);
    const [dir] = await sb.sessionDirs();
    const id = dir.split("/").pop()!;

    const noConfirm = await sb.run(["export"]);
    assertEquals(noConfirm.code, 1);
    assertStringIncludes(noConfirm.stderr, "pass -y/--yes");

    // another session's log lines stay out of the archive
    const other = await sb.run(["--print", "--config-file", config, "-p", "other"]);
    assertEquals(other.code, 0, other.stderr);
    const r = await sb.run(["export", "-y", id]);
    assertEquals(r.code, 0, r.stderr);
    const zip = `${sb.shareDir}/exports/session-${id}.zip`;
    assertEquals(r.stdout, `Exported session ${id} to ${zip}\n`);
    const files = unzipSync(await Deno.readFile(zip));
    const log = new TextDecoder().decode(files["logs/kimi.log"]);
    assertStringIncludes(log, `| ${id} - `);
    for (const line of log.trim().split("\n")) {
      assert(!/^\d{4}-/.test(line) || line.includes(`| ${id} - `), `foreign line: ${line}`);
    }
    const names = Object.keys(files).sort();
    assert(names.includes("session/context.jsonl"));
    assert(names.includes("session/wire.jsonl"));
    assert(names.includes("session/state.json"));
    assert(names.includes("logs/kimi.log"));
    const manifest = JSON.parse(new TextDecoder().decode(files["manifest.json"]));
    assertEquals(manifest.session_id, id);
    assertEquals(manifest.work_dir, sb.workDir);

    const byId = await sb.run(["export", id, "-o", `${sb.root}/x.zip`]);
    assertEquals(byId.code, 0, byId.stderr);
    assert((await Deno.stat(`${sb.root}/x.zip`)).size > 0);
    const missing = await sb.run(["export", "nope"]);
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.stderr, "Session 'nope' not found");
  } finally {
    await sb.cleanup();
  }
});
