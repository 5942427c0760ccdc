import { assert, assertEquals } from "../../helpers/assert.ts";
import { forkSession } from "../../../lib/session/fork.ts";
import { Session } from "../../../lib/session/session.ts";
import { saveState } from "../../../lib/session/state.ts";

Deno.test("forkSession copies context, wire, state and snapshots; the original is untouched", async () => {
  const root = await Deno.makeTempDir();
  try {
    const shareDir = `${root}/share`;
    const workDir = `${root}/work`;
    await Deno.mkdir(workDir);
    const s = await Session.create({ shareDir, workDir });
    await Deno.writeTextFile(s.contextFile, '{"role":"user","content":"hi"}\n');
    await Deno.writeTextFile(s.wireFile, '{"type":"metadata","protocol_version":"1.10"}\n');
    await Deno.mkdir(`${s.dir}/snapshots/objects`, { recursive: true });
    await Deno.writeTextFile(`${s.dir}/snapshots/objects/abc`, "old file");
    s.state.additional_dirs.push("/extra");
    s.state.custom_title = "My work";
    await saveState(s.dir, s.state, { keepExternalFields: false });

    const fork = await forkSession(s);
    assert(fork.id !== s.id);
    assertEquals(await Deno.readTextFile(fork.contextFile), '{"role":"user","content":"hi"}\n');
    assertEquals(await Deno.readTextFile(`${fork.dir}/snapshots/objects/abc`), "old file");
    const reread = await Session.find({ shareDir, workDir, id: fork.id });
    assertEquals(reread!.state.custom_title, "Fork of My work");
    assertEquals(reread!.state.additional_dirs, ["/extra"]);
    await Deno.writeTextFile(fork.contextFile, "changed\n", { append: true });
    assertEquals(await Deno.readTextFile(s.contextFile), '{"role":"user","content":"hi"}\n');
    assertEquals((await forkSession(s, { title: "Named" })).state.custom_title, "Named");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
