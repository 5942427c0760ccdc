/**
 * `POST /api/open-in`: open a path in a desktop app — macOS (`open`, `open -a`, AppleScript
 * for Terminal and iTerm) and Windows (Explorer, `code`/`cursor`, Windows Terminal). Other
 * platforms answer that it is not supported.
 *
 * @module
 */
import { dirname } from "node:path";

/** The apps of `open-in`. */
export type OpenInApp = "finder" | "cursor" | "vscode" | "iterm" | "terminal" | "antigravity";

/** The outcome: ok, or the HTTP error. */
export type OpenInResult = { ok: true } | { ok: false; status: 400 | 500; detail: string };

async function run(cmd: string, args: string[]): Promise<{ ok: boolean; stderr: string }> {
  try {
    const out = await new Deno.Command(cmd, {
      args,
      stdout: "null",
      stderr: "piped",
      stdin: "null",
    })
      .output();
    return { ok: out.success, stderr: new TextDecoder().decode(out.stderr).trim() };
  } catch (err) {
    return { ok: false, stderr: (err as Error).message };
  }
}

function appleScriptString(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** Open `path` in `app`. */
export async function openIn(
  app: OpenInApp,
  path: string,
  os = Deno.build.os,
): Promise<OpenInResult> {
  if (os !== "darwin" && os !== "windows") {
    return { ok: false, status: 400, detail: "Open-in is only supported on macOS and Windows." };
  }
  let st: Deno.FileInfo;
  try {
    st = await Deno.stat(path);
  } catch {
    return { ok: false, status: 400, detail: `Path does not exist: ${path}` };
  }
  const dir = st.isDirectory ? path : dirname(path);
  let r: { ok: boolean; stderr: string };
  if (os === "darwin") {
    switch (app) {
      case "finder":
        r = await run("open", st.isDirectory ? [path] : ["-R", path]);
        break;
      case "cursor":
        r = await run("open", ["-a", "Cursor", path]);
        break;
      case "vscode":
        r = await run("open", ["-a", "Visual Studio Code", path]);
        if (!r.ok) r = await run("open", ["-a", "Code", path]);
        break;
      case "antigravity":
        r = await run("open", ["-a", "Antigravity", path]);
        break;
      case "terminal":
        r = await run("osascript", [
          "-e",
          `tell application "Terminal" to do script "cd " & quoted form of ${
            appleScriptString(dir)
          }`,
          "-e",
          'tell application "Terminal" to activate',
        ]);
        break;
      case "iterm":
        r = await run("osascript", [
          "-e",
          `tell application "iTerm" to create window with default profile command "cd " & quoted form of ${
            appleScriptString(dir)
          } & "; exec $SHELL"`,
        ]);
        break;
    }
  } else {
    switch (app) {
      case "finder":
        r = await run("explorer", st.isDirectory ? [path] : [`/select,${path}`]);
        r = { ok: true, stderr: "" }; // explorer exits 1 even on success
        break;
      case "cursor":
      case "vscode":
        r = await run("cmd", ["/c", "start", "", app === "cursor" ? "cursor" : "code", path]);
        break;
      case "terminal":
        r = await run("wt.exe", ["-d", dir]);
        if (!r.ok) r = await run("cmd.exe", ["/c", "start", "cmd.exe", "/K", `cd /d ${dir}`]);
        break;
      default:
        return { ok: false, status: 400, detail: `${app} is not supported on Windows.` };
    }
  }
  if (!r.ok) return { ok: false, status: 500, detail: r.stderr || "Failed to open application." };
  return { ok: true };
}
