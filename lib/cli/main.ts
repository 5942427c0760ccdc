/**
 * The `kimi` command line: parses flags and subcommands and dispatches to a UI.
 *
 * @module
 */
import { lazyImport } from "../lazy_import.ts";
import { CommanderError } from "@commander-js/extra-typings";
import { commanderUsageMessage, USAGE_EXIT_CODE, usageErrorText } from "./usage_errors.ts";
import { VERSION } from "../version.ts";
import { resolvePath, rootCommand, UsageError, validateOptions } from "./options.ts";
import { registerMcpCommands } from "./mcp_commands.ts";

/** The answer of the deprecated `kimi --acp` (reference §12); the exit code is 1. */
export const ACP_FLAG_DEPRECATED =
  "`kimi --acp` is deprecated. Update your ACP client settings to use `kimi acp` without any flags or options.";

function usageFailure(message: string): number {
  console.error(usageErrorText(message));
  return USAGE_EXIT_CODE;
}

/** Run the CLI with `args`; resolves with the exit code. */
export async function main(args: string[]): Promise<number> {
  let result: Promise<number> = Promise.resolve(0);
  const program = rootCommand().exitOverride().enablePositionalOptions();
  program.configureOutput({
    writeOut: (s) => Deno.stdout.writeSync(new TextEncoder().encode(s)),
    writeErr: (s) => Deno.stderr.writeSync(new TextEncoder().encode(s)),
    // Parse errors are printed below in the reference's words, once.
    outputError: () => {},
  });
  program.command("info").description("Show version and protocol information.")
    .option("--json", "Print JSON.")
    .action(async (o) => {
      const { printInfo } = await lazyImport<typeof import("./info.ts")>(
        "./info.ts",
        import.meta.url,
      );
      await printInfo(Boolean(o.json));
    });
  registerMcpCommands(program, (r) => {
    result = r;
  });
  program.command("export").description("Zip a session (and recent logs) to share diagnostics.")
    .argument("[session_id]", "Session to export (default: the last session of the work dir).")
    .option("-o, --output <path>", "Where to write the zip (default: session-<id>.zip).")
    .option("-y, --yes", "Do not ask for confirmation.")
    .option("-w, --work-dir <dir>", "Working directory whose sessions to look in.")
    .action((sessionId, o) => {
      result = lazyImport<typeof import("./export_session.ts")>(
        "./export_session.ts",
        import.meta.url,
      ).then((m) =>
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
      result = lazyImport<typeof import("./run_acp.ts")>("./run_acp.ts", import.meta.url).then(
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
    const opts = validateOptions(raw, Deno.cwd());
    result = lazyImport<typeof import("./run_agent.ts")>("./run_agent.ts", import.meta.url).then((
      m,
    ) => m.runAgent(opts));
  });
  try {
    await program.parseAsync(args, { from: "user" });
    return await result;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(err.message);
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0;
      const message = commanderUsageMessage(err, program.args);
      return message === null ? 0 : usageFailure(message);
    }
    throw err;
  }
}
