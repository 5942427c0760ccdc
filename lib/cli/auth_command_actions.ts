/**
 * The actions of `kimi login` / `kimi logout` (loaded only when one of them runs): print each
 * event (JSON lines with `--json`), exit 1 when any was an error.
 *
 * @module
 */
import { eventJson, loginKimiCode, logoutKimiCode } from "../auth/login.ts";
import { ConfigError } from "../config/errors.ts";
import { defaultConfigPath, loadConfig } from "../config/load.ts";
import { ensureShareDir, readProcessEnv } from "../config/share_dir.ts";

/** Run `kimi login` or `kimi logout`; resolves with the exit code. */
export async function runAuthCommand(which: "login" | "logout", json: boolean): Promise<number> {
  const out = (line: string) => console.log(line);
  let failed = false;
  try {
    const shareDir = await ensureShareDir(readProcessEnv);
    const { config, path } = await loadConfig({ shareDir });
    const flowOpts = {
      shareDir,
      config,
      configPath: path,
      defaultConfigPath: path ?? defaultConfigPath(shareDir),
      getEnv: readProcessEnv,
      openUrl: json ? undefined : openBrowser,
    };
    const events = which === "login" ? loginKimiCode(flowOpts) : logoutKimiCode(flowOpts);
    for await (const e of events) {
      if (e.type === "error") failed = true;
      if (json) out(eventJson(e));
      else if (e.type === "verification_url") {
        out(e.message);
        out(`User code: ${String(e.data?.user_code ?? "")}`);
      } else if (e.type === "error") console.error(e.message);
      else out(e.message);
    }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const e = { type: "error" as const, message: err.message };
    if (json) out(eventJson(e));
    else console.error(e.message);
    failed = true;
  }
  return failed ? 1 : 0;
}

/** Try to open a URL in the user's browser (only on a terminal; failures are ignored). */
function openBrowser(url: string): void {
  if (!Deno.stdout.isTerminal()) return;
  const cmd = Deno.build.os === "darwin"
    ? ["open", url]
    : Deno.build.os === "windows"
    ? ["cmd", "/c", "start", "", url]
    : ["xdg-open", url];
  try {
    const child = new Deno.Command(cmd[0], {
      args: cmd.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.status.catch(() => {});
    child.unref();
  } catch {
    // no browser or no --allow-run: the URL is printed anyway
  }
}
