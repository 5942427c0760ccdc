/**
 * `kimi plugin install|list|info|remove|enable|disable`: the subcommands' arguments. What they
 * do lives in plugin_command_actions.ts, loaded only when one runs.
 *
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";

type Actions = typeof import("./plugin_command_actions.ts");

/**
 * Register `kimi plugin ...` on the root command. `setResult` receives the command's exit code
 * promise (the CLI awaits it after parsing).
 */
export function registerPluginCommands(
  program: CommandUnknownOpts,
  setResult: (result: Promise<number>) => void,
): void {
  const run = (f: (a: Actions, configFile: string | undefined) => Promise<number>) => {
    const configFile = program.opts().configFile as string | undefined;
    setResult(
      import("./plugin_command_actions.ts").then((a) => f(a, configFile)),
    );
  };
  const plugin = program.command("plugin").description("Manage plugins.");
  plugin.command("install").description(
    "Install a plugin from a directory, a .zip file, a zip URL or a git URL.",
  )
    .argument(
      "<target>",
      "Directory, .zip file, zip URL or git URL (…/repo.git/<sub>, …/tree/<branch>/<sub>).",
    )
    .action((target) => run((a, configFile) => a.install(target, { configFile })));
  plugin.command("list").description("List installed plugins.")
    .action(() => run((a) => a.list()));
  plugin.command("info").description("Show a plugin's details.")
    .argument("<name>", "Plugin name.")
    .action((name) => run((a) => a.info(name)));
  plugin.command("remove").description("Remove an installed plugin.")
    .argument("<name>", "Plugin name.")
    .action((name) => run((a) => a.remove(name)));
  plugin.command("enable").description("Enable an installed plugin (applies to new sessions).")
    .argument("<name>", "Plugin name.")
    .action((name) => run((a) => a.setEnabled(name, true)));
  plugin.command("disable").description("Disable an installed plugin (applies to new sessions).")
    .argument("<name>", "Plugin name.")
    .action((name) => run((a) => a.setEnabled(name, false)));
}
