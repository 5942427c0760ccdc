/**
 * `kimi login [--json]` and `kimi logout [--json]` (reference §1.2): print each event (JSON
 * lines with `--json`), exit 1 when any was an error.
 *
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import { lazyImport } from "../lazy_import.ts";

/** Register `login` and `logout` on the root command; `setResult` receives the exit code. */
export function registerAuthCommands(
  program: CommandUnknownOpts,
  setResult: (r: Promise<number>) => void,
): void {
  program.command("login").description("Sign in to Kimi Code (OAuth device login).")
    .option("--json", "Print events as JSON lines.")
    .action((o) => {
      setResult(runAuthCommand("login", Boolean((o as { json?: boolean }).json)));
    });
  program.command("logout").description("Sign out of Kimi Code and remove its configuration.")
    .option("--json", "Print events as JSON lines.")
    .action((o) => {
      setResult(runAuthCommand("logout", Boolean((o as { json?: boolean }).json)));
    });
}

async function runAuthCommand(which: "login" | "logout", json: boolean): Promise<number> {
  const [{ loginKimiCode, logoutKimiCode, eventJson }, { loadConfig, defaultConfigPath }, share] =
    await Promise.all([
      lazyImport<typeof import("../auth/login.ts")>("../auth/login.ts", import.meta.url),
      lazyImport<typeof import("../config/load.ts")>("../config/load.ts", import.meta.url),
      lazyImport<typeof import("../config/share_dir.ts")>(
        "../config/share_dir.ts",
        import.meta.url,
      ),
    ]);
  const { ConfigError } = await lazyImport<typeof import("../config/errors.ts")>(
    "../config/errors.ts",
    import.meta.url,
  );
  const out = (line: string) => console.log(line);
  let failed = false;
  try {
    const shareDir = await share.ensureShareDir(share.readProcessEnv);
    const { config, path } = await loadConfig({ shareDir });
    const flowOpts = {
      shareDir,
      config,
      configPath: path,
      defaultConfigPath: path ?? defaultConfigPath(shareDir),
      getEnv: share.readProcessEnv,
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
