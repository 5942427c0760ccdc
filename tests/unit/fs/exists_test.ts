import {
  exists,
  isDir,
  isFile,
  isPresent,
  pathStatus,
  pathStatusSync,
} from "../../../lib/fs/exists.ts";
import { assertEquals } from "../../helpers/assert.ts";

const EXISTS_URL = new URL("../../../lib/fs/exists.ts", import.meta.url).href;

Deno.test("fs exists: file, directory, symlink, missing and a missing parent", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/f.txt`, "x");
    await Deno.mkdir(`${dir}/d`);
    await Deno.symlink(`${dir}/nowhere`, `${dir}/dangling`);
    assertEquals(await pathStatus(`${dir}/f.txt`), "file");
    assertEquals(pathStatusSync(`${dir}/d`), "directory");
    assertEquals(await pathStatus(`${dir}/missing`), "missing");
    assertEquals(await pathStatus(`${dir}/f.txt/below`), "missing");
    assertEquals(await pathStatus(`${dir}/dangling`), "missing");
    assertEquals(await pathStatus(`${dir}/dangling`, { noFollow: true }), "other");
    assertEquals(await exists(`${dir}/dangling`, { noFollow: true }), true);
    assertEquals(await exists(`${dir}/missing`), false);
    assertEquals(await isFile(`${dir}/f.txt`), true);
    assertEquals(await isFile(`${dir}/d`), false);
    assertEquals(await isDir(`${dir}/d`), true);
    assertEquals(await isDir(`${dir}/missing`), false);
    assertEquals(isPresent("denied"), false);
    assertEquals(isPresent("missing"), false);
    assertEquals(isPresent("other"), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs exists: a path Deno may not read is 'denied', never 'missing'", async () => {
  const allowed = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${outside}/secret.txt`, "x");
    const script = `${allowed}/probe.ts`;
    await Deno.writeTextFile(
      script,
      `import { exists, isFile, pathStatus, pathStatusSync } from ${JSON.stringify(EXISTS_URL)};
const out: Record<string, string> = {};
out.status = await pathStatus(${JSON.stringify(`${outside}/secret.txt`)});
out.statusMissing = pathStatusSync(${JSON.stringify(`${outside}/missing.txt`)});
out.inside = await pathStatus(${JSON.stringify(script)});
for (const [k, f] of [["exists", exists], ["isFile", isFile]] as const) {
  try {
    out[k] = String(await f(${JSON.stringify(`${outside}/secret.txt`)}));
  } catch (e) {
    out[k] = "threw " + (e as Error).name;
  }
}
console.log(JSON.stringify(out));
`,
    );
    const { stdout, success } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", `--allow-read=${allowed}`, script],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    assertEquals(success, true);
    assertEquals(JSON.parse(new TextDecoder().decode(stdout)), {
      status: "denied",
      statusMissing: "denied",
      inside: "file",
      exists: "threw NotCapable",
      isFile: "threw NotCapable",
    });
  } finally {
    await Deno.remove(allowed, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});
