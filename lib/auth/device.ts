/**
 * The device identity sent to the Kimi platforms: a random id kept in `<share>/device_id`
 * (mode 600) and the `X-Msh-*` headers describing this machine.
 *
 * @module
 */
import { join } from "node:path";
import { VERSION } from "../version.ts";

/** The device id, created on first use. */
export async function deviceId(shareDir: string): Promise<string> {
  const path = join(shareDir, "device_id");
  try {
    const text = (await Deno.readTextFile(path)).trim();
    if (text) return text;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) return "unknown";
  }
  const id = crypto.randomUUID().replaceAll("-", "");
  try {
    await Deno.writeTextFile(path, id, { mode: 0o600 });
  } catch {
    // an unwritable share dir only loses the persistence of the id
  }
  return id;
}

function ascii(value: string): string {
  const clean = value.replace(/[^\x20-\x7e]/g, "").trim();
  return clean || "unknown";
}

function osName(): string {
  switch (Deno.build.os) {
    case "darwin":
      return "macOS";
    case "windows":
      return "Windows";
    case "linux":
      return "Linux";
    default:
      return Deno.build.os;
  }
}

/** `X-Msh-*` headers of requests to the Kimi OAuth host and the Kimi Code API. */
export async function commonHeaders(shareDir: string): Promise<Record<string, string>> {
  let host = "unknown";
  let release = "";
  try {
    host = Deno.hostname();
  } catch {
    // --allow-sys not granted
  }
  try {
    release = Deno.osRelease();
  } catch {
    // --allow-sys not granted
  }
  const model = [osName(), release, Deno.build.arch].filter(Boolean).join(" ");
  return {
    "X-Msh-Platform": "kimi_cli",
    "X-Msh-Version": VERSION,
    "X-Msh-Device-Name": ascii(host),
    "X-Msh-Device-Model": ascii(model),
    "X-Msh-Os-Version": ascii(release),
    "X-Msh-Device-Id": ascii(await deviceId(shareDir)),
  };
}
