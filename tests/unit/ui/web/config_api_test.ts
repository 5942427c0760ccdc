import { assert, assertEquals } from "../../../helpers/assert.ts";
import { readConfigText, writeConfigText } from "../../../../lib/ui/web/server/config_api.ts";

const TOML = `default_model = "m"

[providers.p]
type = "kimi"
base_url = "https://api.example"
api_key = "sk-very-secret-key-123"

[models.m]
provider = "p"
model = "kimi-k2"
max_context_size = 1000
`;

Deno.test("config.toml over the API: secrets masked on read, put back on write", async () => {
  const share = await Deno.makeTempDir();
  try {
    const path = `${share}/config.toml`;
    await Deno.writeTextFile(path, TOML);
    const read = await readConfigText(share, path);
    assert(!read.content.includes("sk-very-secret-key-123"), read.content);
    assert(/api_key = "kimi-secret-[0-9a-f]{16}"/.test(read.content), read.content);
    const edited = read.content.replace("max_context_size = 1000", "max_context_size = 2000");
    assertEquals(await writeConfigText(share, path, edited), { success: true });
    const saved = await Deno.readTextFile(path);
    assert(saved.includes('api_key = "sk-very-secret-key-123"'));
    assert(saved.includes("max_context_size = 2000"));
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
    const bad = await writeConfigText(share, path, "default_model = [");
    assertEquals(bad.success, false);
    assertEquals(await Deno.readTextFile(path), saved);
    const forged = await writeConfigText(
      share,
      path,
      saved.replace("sk-very-secret-key-123", "kimi-secret-0000000000000000"),
    );
    assertEquals(forged.success, false);
    assert(forged.error!.includes("Unknown secret marker"));
  } finally {
    await Deno.remove(share, { recursive: true });
  }
});
