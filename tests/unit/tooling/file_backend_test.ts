import { assertEquals, assertRejects } from "../../helpers/assert.ts";
import { LOCAL_FILES, remoteFileBackend } from "../../../lib/tooling/file_backend.ts";

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  let out = "";
  const dec = new TextDecoder();
  for await (const c of chunks) out += dec.decode(c, { stream: true });
  return out + dec.decode();
}

Deno.test("file backend: a remote reader/writer is used only for existing files; append reads first", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const a = `${dir}/a.txt`;
    await Deno.writeTextFile(a, "disk\n");
    const calls: string[] = [];
    const buffers = new Map([[a, "buffer\n"]]);
    const files = remoteFileBackend({
      read: (p) => {
        calls.push(`read ${p}`);
        return Promise.resolve(buffers.get(p) ?? "");
      },
      write: (p, text) => {
        calls.push(`write ${p}`);
        buffers.set(p, text);
        return Promise.resolve();
      },
    });
    assertEquals(await files.readText(a), "buffer\n");
    assertEquals(await collect(files.chunks(a)), "buffer\n");
    assertEquals(await files.readText(`${dir}/missing.txt`), null);
    await assertRejects(() => collect(files.chunks(`${dir}/missing.txt`)), Deno.errors.NotFound);
    assertEquals(await files.writeText(a, "more ✓\n", { append: true }), 16); // bytes: 7 + 9
    assertEquals(buffers.get(a), "buffer\nmore ✓\n");
    assertEquals(await Deno.readTextFile(a), "disk\n");
    assertEquals(calls, [`read ${a}`, `read ${a}`, `read ${a}`, `write ${a}`]);

    const readOnly = remoteFileBackend({ read: () => Promise.resolve("x") });
    assertEquals(await readOnly.writeText(`${dir}/b.txt`, "local"), 5);
    assertEquals(await Deno.readTextFile(`${dir}/b.txt`), "local");
    assertEquals(await collect(LOCAL_FILES.chunks(`${dir}/b.txt`)), "local");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
