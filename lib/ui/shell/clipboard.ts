/**
 * Reading an image from the system clipboard through the platform's clipboard tool:
 * `wl-paste` (Wayland), `xclip` (X11) or `pngpaste` (macOS), whichever is on PATH first.
 *
 * @module
 */
import { join } from "node:path";

/** What a clipboard read found. */
export type ClipboardImage =
  | { kind: "image"; mime: string; bytes: Uint8Array; tool: string }
  | { kind: "none"; message: string };

/** The message when no clipboard tool is installed. */
export const NO_CLIPBOARD_TOOL =
  "No clipboard tool: install wl-paste, xclip or pngpaste, or attach a file with @image.png";

interface Tool {
  name: string;
  /** Arguments listing the clipboard's types (null: the tool only gives PNG). */
  listTypes: string[] | null;
  /** Arguments printing the clipboard as `mime`. */
  read: (mime: string) => string[];
}

const TOOLS: readonly Tool[] = [
  {
    name: "wl-paste",
    listTypes: ["--list-types"],
    read: (mime) => ["--no-newline", "--type", mime],
  },
  {
    name: "xclip",
    listTypes: ["-selection", "clipboard", "-t", "TARGETS", "-o"],
    read: (mime) => ["-selection", "clipboard", "-t", mime, "-o"],
  },
  { name: "pngpaste", listTypes: null, read: () => ["-"] },
];

const PREFERRED = ["image/png", "image/jpeg", "image/webp", "image/gif", "image/bmp"];

async function onPath(name: string, path: string): Promise<string | null> {
  for (const dir of path.split(":")) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      const info = await Deno.stat(p);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return p;
    } catch {
      // not here
    }
  }
  return null;
}

async function run(cmd: string, args: string[]): Promise<Uint8Array | null> {
  try {
    const out = await new Deno.Command(cmd, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? out.stdout : null;
  } catch {
    return null;
  }
}

/** Read an image from the clipboard (`path`: the PATH to search, default the process's). */
export async function readClipboardImage(path?: string): Promise<ClipboardImage> {
  let search = path;
  if (search === undefined) {
    try {
      search = Deno.env.get("PATH") ?? "";
    } catch {
      search = "";
    }
  }
  for (const tool of TOOLS) {
    const cmd = await onPath(tool.name, search);
    if (!cmd) continue;
    let mime = "image/png";
    if (tool.listTypes) {
      const types = await run(cmd, tool.listTypes);
      const list = types ? new TextDecoder().decode(types).split(/\s+/).filter(Boolean) : [];
      const found = PREFERRED.find((t) => list.includes(t)) ??
        list.find((t) => t.startsWith("image/"));
      if (!found) {
        return { kind: "none", message: "The clipboard holds no image (Ctrl-V pastes images)." };
      }
      mime = found;
    }
    const bytes = await run(cmd, tool.read(mime));
    if (!bytes || bytes.length === 0) {
      return { kind: "none", message: "The clipboard holds no image (Ctrl-V pastes images)." };
    }
    return { kind: "image", mime, bytes, tool: tool.name };
  }
  return { kind: "none", message: NO_CLIPBOARD_TOOL };
}
