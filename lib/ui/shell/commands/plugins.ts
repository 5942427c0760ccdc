/**
 * `/plugins`: list the installed plugins, enable, disable or remove one (like `kimi plugin`);
 * changes apply to new sessions (`/new`, `/reload`).
 *
 * @module
 */
import { PluginError } from "../../../plugins/manifest.ts";
import { removePlugin, setPluginEnabled } from "../../../plugins/install.ts";
import { pluginListing } from "../../../plugins/listing.ts";
import { pluginsRoot } from "../../../plugins/store.ts";
import type { ShellCommand } from "./command.ts";

const USAGE = "Usage: /plugins [list | enable <name> | disable <name> | remove <name>]. " +
  "Install plugins with `kimi plugin install <dir|zip|url>`.";

/** Run `/plugins <args>` against the plugins root of `shareDir`; returns the text to show. */
export async function pluginsCommandText(shareDir: string, args: string): Promise<string> {
  const root = pluginsRoot(shareDir);
  const [verb = "list", name, ...rest] = args.trim().split(/\s+/).filter(Boolean);
  try {
    if (verb === "list" && name === undefined) {
      const lines = await pluginListing(root);
      return lines.length ? ["Plugins:", ...lines].join("\n") : "No plugins installed.";
    }
    if (!name || rest.length > 0) return USAGE;
    switch (verb) {
      case "enable":
      case "disable":
        await setPluginEnabled(root, name, verb === "enable");
        return `${verb === "enable" ? "Enabled" : "Disabled"} plugin '${name}'. ` +
          "Run /reload or /new to apply.";
      case "remove":
        await removePlugin(root, name);
        return `Removed plugin '${name}'. Run /reload or /new to apply.`;
      default:
        return USAGE;
    }
  } catch (err) {
    if (err instanceof PluginError) return `Error: ${err.message}`;
    throw err;
  }
}

/** `/plugins`. */
export const pluginsCommand: ShellCommand = {
  name: "plugins",
  aliases: [],
  description: "List, enable, disable and remove plugins",
  async run(ctx, args) {
    ctx.print(await pluginsCommandText(ctx.app.session.shareDir, args));
  },
};
