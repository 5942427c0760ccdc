/**
 * `kimi login [--json]` and `kimi logout [--json]` (reference §1.2): print each event (JSON
 * lines with `--json`), exit 1 when any was an error.
 *
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";

/** Register `login` and `logout` on the root command; `setResult` receives the exit code. */
export function registerAuthCommands(
  program: CommandUnknownOpts,
  setResult: (r: Promise<number>) => void,
): void {
  program.command("login").description("Sign in to Kimi Code (OAuth device login).")
    .option("--json", "Print events as JSON lines.")
    .action((o) => {
      setResult(runAuth("login", Boolean((o as { json?: boolean }).json)));
    });
  program.command("logout").description("Sign out of Kimi Code and remove its configuration.")
    .option("--json", "Print events as JSON lines.")
    .action((o) => {
      setResult(runAuth("logout", Boolean((o as { json?: boolean }).json)));
    });
}

async function runAuth(which: "login" | "logout", json: boolean): Promise<number> {
  const { runAuthCommand } = await import("./auth_command_actions.ts");
  return await runAuthCommand(which, json);
}
