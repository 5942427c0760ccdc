/**
 * `/reload`: read the configuration, agent file, skills and MCP servers again and rebuild the
 * agent on the same session, without restarting.
 *
 * @module
 */
import { ConfigError } from "../../../config/errors.ts";
import { style } from "../theme.ts";
import type { ShellCommand } from "./command.ts";

/** `/reload`. */
export const reloadCommand: ShellCommand = {
  name: "reload",
  aliases: [],
  description: "Reload config, agent, skills and MCP servers",
  async run(ctx) {
    let config;
    try {
      config = await ctx.reloadSources();
    } catch (err) {
      const msg = err instanceof ConfigError ? err.message : (err as Error).message;
      ctx.print(style.error(`Reload failed, nothing changed: ${msg}`));
      return;
    }
    const before = ctx.app.soul.commands.length;
    await ctx.replaceApp(config ? { config } : {});
    const app = ctx.app;
    const llm = app.llm;
    const skills = app.soul.commands.filter((c) => c.name.startsWith("skill:")).length;
    const mcp = app.mcp?.status() ?? null;
    ctx.print(
      `Reloaded: model ${llm ? llm.modelAlias || llm.provider.modelName : "not set"}, agent ` +
        `${app.agent.name || "default"}, ${skills} skill(s)` +
        (mcp ? `, ${mcp.total} MCP server(s)` : ", no MCP servers") +
        (config ? "" : " (the config was not re-read here)") +
        (before !== app.soul.commands.length
          ? ` · commands ${before} → ${app.soul.commands.length}`
          : "") +
        ".",
    );
  },
};
