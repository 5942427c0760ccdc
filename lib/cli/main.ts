/**
 * The `kimi` command line: parses flags and subcommands and dispatches to a UI.
 *
 * @module
 */
import { CommanderError } from "./commander.ts";
import { commanderHelp, commanderOutput } from "./commander_output.ts";
import {
  clickUsage,
  commanderUsageMessage,
  USAGE_EXIT_CODE,
  usageErrorText,
} from "./usage_errors.ts";
import { VERSION } from "../version.ts";
import { resolvePath, rootCommand, UsageError, validateOptions } from "./options.ts";
import { registerMcpCommands } from "./mcp_commands.ts";
import { registerAuthCommands } from "./auth_commands.ts";
import { registerWebCommands } from "./web_commands.ts";
import { registerVisCommand } from "./vis_command.ts";
import { registerPluginCommands } from "./plugin_commands.ts";

/** The answer of the deprecated `kimi --acp` (reference §12); the exit code is 1. */
export const ACP_FLAG_DEPRECATED =
  "`kimi --acp` is deprecated. Update your ACP client settings to use `kimi acp` without any flags or options.";

function usageFailure(message: string, where?: ErrorSite): number {
  console.error(usageErrorText(message, where?.command, where?.usage));
  return USAGE_EXIT_CODE;
}

/** The subcommand a parse error happened in: its full name and usage (Click's spelling). */
interface ErrorSite {
  command: string;
  usage: string;
}

/** Where each subcommand's parse errors are tagged with the subcommand (see {@link ErrorSite}). */
const ERROR_SITE = Symbol("kimi.errorSite");

type CommandLike = {
  name(): string;
  commands: readonly CommandLike[];
  registeredArguments: readonly { name(): string; required: boolean; variadic: boolean }[];
  exitOverride(fn: (err: InstanceType<typeof CommanderError>) => never): unknown;
};

/** Make every subcommand's parse errors carry the subcommand, so its own usage is printed. */
function tagSubcommandErrors(cmd: CommandLike, path: string): void {
  for (const sub of cmd.commands) {
    const command = `${path} ${sub.name()}`;
    const usage = clickUsage({
      hasCommands: sub.commands.length > 0,
      args: sub.registeredArguments.map((a) => ({
        name: a.name(),
        required: a.required,
        variadic: a.variadic,
      })),
    });
    sub.exitOverride((err) => {
      (err as unknown as Record<symbol, ErrorSite>)[ERROR_SITE] ??= { command, usage };
      throw err;
    });
    tagSubcommandErrors(sub, command);
  }
}

/**
 * The error for words given where a command or option was expected: the nearest subcommand
 * for a near-miss (`kimi exprot`, `kimi mpc list`), else the `-p` command that sends the words
 * as a prompt (`kimi "fix the bug"`).
 */
export function strayArgumentsMessage(args: string[], commands: string[]): string {
  const first = args[0];
  // a near-miss of a subcommand, even with its own arguments after it (`kimi mpc list`)
  if (!/\s/.test(first)) {
    const near = commands
      .map((c) => ({ c, d: editDistance(first.toLowerCase(), c) }))
      .filter((x) => x.d <= Math.max(1, Math.floor(first.length / 3)) + 1)
      .sort((a, b) => a.d - b.d)[0];
    if (near) return `No such command '${first}'. Did you mean '${near.c}'?`;
  }
  const text = args.join(" ");
  const quoted = `"${text.replace(/(["\\$`])/g, "\\$1")}"`;
  return `Got unexpected extra argument${args.length > 1 ? "s" : ""} (${text}). To give it to ` +
    `the agent as a prompt, run: kimi -p ${quoted} (or start kimi and type it; add --print to ` +
    "run without the shell).";
}

function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0];
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j];
      dp[j] = Math.min(dp[j] + 1, dp[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length];
}

/** Run the CLI with `args`; resolves with the exit code. */
export async function main(args: string[]): Promise<number> {
  let result: Promise<number> = Promise.resolve(0);
  const program = rootCommand().exitOverride().enablePositionalOptions();
  // Parse errors are printed below in the reference's words, once.
  program.configureOutput(commanderOutput()).configureHelp(commanderHelp());
  // stray words reach the action, which says what to run instead (see strayArgumentsMessage)
  program.allowExcessArguments(true);
  program.command("info").description("Show version and protocol information.")
    .option("--json", "Print JSON.")
    .action(async (o) => {
      const { printInfo } = await import("./info.ts");
      await printInfo(Boolean(o.json));
    });
  registerMcpCommands(program, (r) => {
    result = r;
  });
  registerAuthCommands(program, (r) => {
    result = r;
  });
  registerWebCommands(program, () => validateOptions(program.opts(), Deno.cwd()), (r) => {
    result = r;
  });
  registerVisCommand(program, (r) => {
    result = r;
  });
  registerPluginCommands(program, (r) => {
    result = r;
  });
  program.command("export").description("Zip a session (and its log lines) to share diagnostics.")
    .argument("[session_id]", "Session to export (default: the last session of the work dir).")
    .option(
      "-o, --output <path>",
      "Where to write the zip (default: ~/.kimi/exports/session-<id>.zip).",
    )
    .option("-y, --yes", "Do not ask for confirmation.")
    .option("-w, --work-dir <dir>", "Working directory whose sessions to look in.")
    .action((sessionId, o) => {
      result = import("./export_session.ts").then((m) =>
        m.exportSession({
          sessionId,
          output: o.output,
          yes: Boolean(o.yes),
          workDir: o.workDir ? resolvePath(Deno.cwd(), o.workDir) : Deno.cwd(),
        })
      );
    });
  program.command("acp")
    .description(
      "Serve the Agent Client Protocol on stdin/stdout (Zed, JetBrains and other ACP editors).",
    )
    .action(() => {
      const opts = validateOptions(program.opts(), Deno.cwd());
      result = import("./run_acp.ts").then(
        (m) => m.runAcpCommand(opts),
      );
    });
  program.action((raw) => {
    if (raw.version) {
      console.log(`kimi, version ${VERSION}`);
      return;
    }
    if (raw.acp) {
      console.error(ACP_FLAG_DEPRECATED);
      result = Promise.resolve(1);
      return;
    }
    if (program.args.length > 0) {
      throw new UsageError(
        strayArgumentsMessage(program.args, program.commands.map((c) => c.name())),
      );
    }
    const opts = validateOptions(raw, Deno.cwd());
    result = import("./run_agent.ts").then((
      m,
    ) => m.runAgent(opts));
  });
  tagSubcommandErrors(program as unknown as CommandLike, "kimi");
  try {
    await program.parseAsync(args, { from: "user" });
    return await result;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(err.message);
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0;
      const message = commanderUsageMessage(err, program.args);
      const site = (err as unknown as Record<symbol, ErrorSite | undefined>)[ERROR_SITE];
      return message === null ? 0 : usageFailure(message, site);
    }
    throw err;
  }
}
