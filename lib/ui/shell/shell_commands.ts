/**
 * Shell-only slash commands (reference §6.11): help, exit, version, model, sessions, new,
 * title, usage, debug, mcp, permissions, editor, theme, login (setup), logout.
 *
 * @module
 */
import { saveConfig } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import { KIMI_CODE_PROVIDER_KEY } from "../../auth/kimi_code.ts";
import { processEnv } from "./attention.ts";
import { deriveCapabilities } from "../../config/model_resolution.ts";
import { extractText } from "../../llm/message.ts";
import { Session } from "../../session/session.ts";
import { VERSION } from "../../version.ts";
import type { ShellContext } from "./shell_context.ts";
import { runLogout, runSetup } from "./setup_wizard.ts";
import { setTheme, style, type ThemeName } from "./theme.ts";
import { pickSession, sessionsOfAllWorkDirs } from "./session_picker.ts";
import { select } from "./widgets.ts";

import type { ShellCommand } from "./commands/command.ts";
import { EXTRA_KEYS_HELP, MORE_SHELL_COMMANDS } from "./commands/mod.ts";

export type { CommandOutcome, ShellCommand } from "./commands/command.ts";

const TITLE_MAX = 200;

/** The shell commands, in `/help` order. */
export const SHELL_COMMANDS: readonly ShellCommand[] = [
  {
    name: "help",
    aliases: ["h", "?"],
    description: "Show commands and keys",
    run(ctx) {
      ctx.print(helpText(ctx));
      return Promise.resolve();
    },
  },
  {
    name: "exit",
    aliases: ["quit"],
    description: "Exit kimi",
    run: () => Promise.resolve("exit" as const),
  },
  {
    name: "version",
    aliases: [],
    description: "Show the version",
    run(ctx) {
      ctx.print(`kimi, version ${VERSION}`);
      return Promise.resolve();
    },
  },
  {
    name: "login",
    aliases: ["setup"],
    description: "Sign in to Kimi Code, or configure a platform, API key and model",
    async run(ctx) {
      await runSetup(ctx);
    },
  },
  {
    name: "logout",
    aliases: [],
    description: "Sign out of Kimi Code",
    async run(ctx) {
      await runLogout(ctx);
    },
  },
  {
    name: "model",
    aliases: [],
    description: "Switch the model (saved as the default)",
    async run(ctx, args) {
      const config = await refreshManagedModels(ctx);
      const aliases = Object.keys(config.models);
      if (aliases.length === 0) {
        ctx.print("No models are configured. Run /setup to add one.");
        return;
      }
      const current = ctx.app.llm?.modelAlias ?? config.default_model;
      let alias = args.trim();
      let thinking: boolean | undefined;
      if (!alias) {
        const picked = await select(ctx.term, {
          title: [style.bold("Select a model")],
          options: aliases.map((a) => ({
            label: a,
            hint: `${config.models[a].model}${a === current ? " (current)" : ""}`,
          })),
          initial: Math.max(0, aliases.indexOf(current)),
        });
        if (picked === null) return;
        alias = aliases[picked[0]];
        // as the reference: a model that can think but need not asks whether it should
        const caps = deriveCapabilities(config.models[alias]);
        if (caps.has("thinking") && !caps.has("always_thinking")) {
          const effort = ctx.app.llm?.provider.thinkingEffort;
          const on = effort ? effort !== "off" : config.default_thinking;
          const answer = await select(ctx.term, {
            title: [style.bold("Enable thinking mode?")],
            options: [{ label: "Yes" }, { label: "No" }],
            initial: on ? 0 : 1,
          });
          if (answer === null) return;
          thinking = answer[0] === 0;
        }
      }
      if (!config.models[alias]) {
        ctx.print(`Unknown model "${alias}". Configured models: ${aliases.join(", ")}.`);
        return;
      }
      const next = {
        ...config,
        default_model: alias,
        ...(thinking === undefined ? {} : { default_thinking: thinking }),
      };
      if (ctx.configPath) await saveConfig(next, ctx.configPath);
      await ctx.replaceApp({ config: next, modelAlias: alias, thinking });
      ctx.print(
        `Switched to model ${alias}` +
          (thinking === undefined ? "" : ` with thinking ${thinking ? "on" : "off"}`) +
          (ctx.configPath
            ? ` (saved as the default in ${ctx.configPath}).`
            : " (not saved: --config)."),
      );
    },
  },
  {
    name: "sessions",
    aliases: ["resume"],
    description: "Pick a session of this work dir to resume",
    async run(ctx) {
      const { shareDir, workDir } = ctx.app.session;
      const sessions = await Session.list({ shareDir, workDir });
      if (sessions.length === 0) {
        ctx.print("No other sessions in this work dir yet.");
        return;
      }
      const chosen = await pickSession(ctx.term, sessions, {
        current: ctx.app.session.id,
        escape: "Esc keeps the current session",
        allSessions: () => sessionsOfAllWorkDirs(shareDir),
      });
      if (chosen === null) return;
      if (chosen.id === ctx.app.session.id) {
        ctx.print("That is the current session.");
        return;
      }
      if (chosen.workDir !== workDir) {
        // the tools of this run work in this work dir: another one's session starts there
        ctx.print(
          `That session belongs to ${chosen.workDir}. Resume it there: ` +
            `kimi --work-dir ${chosen.workDir} --session ${chosen.id}`,
        );
        return;
      }
      await ctx.replaceApp({ session: chosen });
      ctx.print(`Resumed session ${chosen.id}: ${await chosen.title()}`);
      await ctx.showTranscript();
    },
  },
  {
    name: "new",
    aliases: ["clear"],
    description: "Start a new session",
    async run(ctx) {
      const { shareDir, workDir } = ctx.app.session;
      const session = await Session.create({ shareDir, workDir });
      await ctx.replaceApp({ session });
      ctx.print(`Started a new session ${session.id}.`);
    },
  },
  {
    name: "title",
    aliases: ["rename"],
    description: "Show or set the session title",
    async run(ctx, args) {
      const session = ctx.app.session;
      const title = args.trim();
      if (!title) {
        ctx.print(`Title: ${await session.title()}`);
        return;
      }
      if (title.length > TITLE_MAX) {
        ctx.print(`The title is too long (${title.length} characters; at most ${TITLE_MAX}).`);
        return;
      }
      await session.setTitle(title);
      ctx.print(`Session title set to: ${title}`);
    },
  },
  {
    name: "debug",
    aliases: [],
    description: "Show the context the model sees",
    run(ctx) {
      const history = ctx.app.soul.context.history;
      const lines = [
        `Context: ${history.length} messages, ${ctx.app.soul.context.tokenCount} tokens`,
      ];
      history.forEach((m, i) => {
        const text = extractText(m.content, " ").replace(/\s+/g, " ");
        const calls = m.tool_calls?.length ? ` [${m.tool_calls.length} tool call(s)]` : "";
        lines.push(
          `${String(i + 1).padStart(3)}. ${m.role}: ${text.slice(0, 100)}${
            text.length > 100 ? "…" : ""
          }${calls}`,
        );
      });
      ctx.print(lines.join("\n"));
      return Promise.resolve();
    },
  },
  {
    name: "mcp",
    aliases: [],
    description: "Show MCP servers and their tools",
    run(ctx) {
      const s = ctx.app.mcp?.status() ?? ctx.mcpStatus;
      if (!s || s.total === 0) {
        ctx.print(
          "No MCP servers are connected. Add them in ~/.kimi/mcp.json or with --mcp-config-file.",
        );
        return Promise.resolve();
      }
      const lines = [`MCP: ${s.connected}/${s.total} servers connected, ${s.tools} tools`];
      for (const srv of s.servers) {
        lines.push(`  ${srv.name} (${srv.status}): ${srv.tools.join(", ") || "no tools"}`);
      }
      ctx.print(lines.join("\n"));
      return Promise.resolve();
    },
  },
  {
    name: "permissions",
    aliases: [],
    description: "List, add and remove approval rules",
    async run(ctx, args) {
      const { runPermissionsCommand } = await import("./permissions_command.ts");
      ctx.print(await runPermissionsCommand(ctx.app.soul.approval, args));
    },
  },
  {
    name: "editor",
    aliases: [],
    description: "Compose the next message in the editor; /editor <command> sets and saves it",
    async run(ctx, args) {
      const command = args.trim();
      if (command) {
        // `/editor code --wait`: the editor for /editor and Ctrl-O, saved as default_editor
        ctx.app.config.default_editor = command;
        if (ctx.configPath) await saveConfig(ctx.app.config, ctx.configPath);
        ctx.print(
          `Editor set to \`${command}\`` +
            (ctx.configPath
              ? ` (saved as default_editor in ${ctx.configPath}).`
              : " (not saved: --config)."),
        );
        return;
      }
      const { composeInEditor } = await import("./editor.ts");
      const text = await composeInEditor(ctx);
      if (text === null) return;
      if (!text.trim()) {
        ctx.print("Nothing to send (the editor buffer was empty).");
        return;
      }
      ctx.prefill = text.replace(/\n+$/, "");
    },
  },
  {
    name: "theme",
    aliases: [],
    description: "Switch the colour theme (dark or light)",
    async run(ctx, args) {
      const name = args.trim();
      if (!name) {
        ctx.print(`Theme: ${ctx.app.config.theme}. Usage: /theme dark|light`);
        return;
      }
      if (name !== "dark" && name !== "light") {
        ctx.print(`Unknown theme "${name}". Valid themes: dark, light.`);
        return;
      }
      setTheme(name as ThemeName);
      ctx.app.config.theme = name as ThemeName;
      if (ctx.configPath) await saveConfig(ctx.app.config, ctx.configPath);
      ctx.print(`Theme set to ${name}.`);
    },
  },
  ...MORE_SHELL_COMMANDS,
];

/**
 * Bring the managed Kimi Code models up to date with the login's model list (at start and in
 * `/model`): saved to the config file and into the running app's config. Returns the config to
 * use; a failure is shown in one line and changes nothing.
 */
export async function refreshManagedModels(ctx: ShellContext): Promise<Config> {
  const config = ctx.app.config;
  if (!config.providers[KIMI_CODE_PROVIDER_KEY]?.oauth) return config;
  try {
    const { refreshKimiCodeModels } = await import("../../auth/login.ts");
    const next = await refreshKimiCodeModels(config, {
      shareDir: ctx.app.session.shareDir,
      getEnv: processEnv,
    });
    if (next === null) return config;
    if (ctx.configPath) await saveConfig(next, ctx.configPath);
    config.models = next.models;
    return next;
  } catch (err) {
    ctx.print(style.dim(`Could not refresh the Kimi Code models: ${(err as Error).message}`));
    return config;
  }
}

/** Find a shell command by name or alias. */
export function findShellCommand(name: string): ShellCommand | undefined {
  return SHELL_COMMANDS.find((c) => c.name === name || c.aliases.includes(name));
}

function helpText(ctx: ShellContext): string {
  const row = (n: string, aliases: string[], d: string) =>
    `  /${n}${aliases.length ? ` (${aliases.map((a) => "/" + a).join(", ")})` : ""}`.padEnd(30) + d;
  const lines = [style.bold("Shell commands")];
  for (const c of SHELL_COMMANDS) lines.push(row(c.name, c.aliases, c.description));
  lines.push(style.bold("Agent commands"));
  for (const c of ctx.app.soul.commands) {
    // a name the shell takes for itself (`/clear` starts a new session) is listed there; the
    // agent command keeps its other names (`/reset` clears the context)
    const [name, ...aliases] = [c.name, ...c.aliases].filter((n) => !findShellCommand(n));
    if (name) lines.push(row(name, aliases, c.description));
  }
  lines.push(style.bold("Keys"));
  lines.push("  Enter send · Ctrl-J or Alt-Enter newline · Tab complete /commands and @paths");
  lines.push("  ↑/↓ history · Ctrl-C cancel (twice at an empty prompt: exit) · Ctrl-D exit");
  lines.push("  Ctrl-X toggle shell-command mode");
  lines.push(...EXTRA_KEYS_HELP);
  return lines.join("\n");
}
