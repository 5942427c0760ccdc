/**
 * The `/api/vis` routes on a bare Hono app: unknown and escaping addresses are 404, a session's
 * records are served, an import lands as an imported session, and with `readOnly` (kimi web's
 * restricted mode) both writing routes answer 403.
 *
 * @module
 */
import { Hono } from "hono";
import { zipSync } from "fflate";
import { assertEquals } from "../../../helpers/assert.ts";
import { mountVisRoutes } from "../../../../lib/ui/vis/vis_routes.ts";

const enc = new TextEncoder();
const WIRE = [
  JSON.stringify({ type: "metadata", protocol_version: "1.10" }),
  JSON.stringify({ timestamp: 1, message: { type: "TurnBegin", payload: { user_input: "hi" } } }),
  JSON.stringify({ timestamp: 2, message: { type: "TurnEnd", payload: {} } }),
  "",
].join("\n");

function importForm(): FormData {
  const form = new FormData();
  form.append("file", new File([zipSync({ "wire.jsonl": enc.encode(WIRE) })], "s.zip"));
  return form;
}

Deno.test("vis routes: records, addresses, import, and read-only mode", async () => {
  const share = await Deno.realPath(await Deno.makeTempDir());
  try {
    const dir = `${share}/sessions/abc123/11111111-2222-3333-4444-555555555555`;
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(`${dir}/wire.jsonl`, WIRE);
    const app = new Hono();
    mountVisRoutes(app, { shareDir: share });
    const wire = await (await app.request(
      "/api/vis/sessions/abc123/11111111-2222-3333-4444-555555555555/wire",
    )).json();
    assertEquals(wire.total, 2);
    for (const path of ["/api/vis/sessions/abc123/nope/wire", "/api/vis/sessions/abc123/../wire"]) {
      const res = await app.request(path);
      assertEquals(res.status, 404, path);
      await res.body?.cancel();
    }
    const imported = await app.request("/api/vis/sessions/import", {
      method: "POST",
      body: importForm(),
    });
    assertEquals(imported.status, 200);
    const { session_id } = await imported.json();
    const list = await (await app.request("/api/vis/sessions")).json();
    assertEquals(
      list.map((s: { imported: boolean; turns: number }) => [s.imported, s.turns]).sort(),
      [[false, 1], [true, 1]],
    );

    const ro = new Hono();
    mountVisRoutes(ro, { shareDir: share, readOnly: true });
    const refused = await ro.request("/api/vis/sessions/import", {
      method: "POST",
      body: importForm(),
    });
    assertEquals(refused.status, 403);
    await refused.body?.cancel();
    const del = await ro.request(`/api/vis/sessions/imported/${session_id}`, { method: "DELETE" });
    assertEquals(del.status, 403);
    await del.body?.cancel();
    // Reading still works in read-only mode.
    assertEquals((await ro.request("/api/vis/sessions")).status, 200);
  } finally {
    await Deno.remove(share, { recursive: true });
  }
});
