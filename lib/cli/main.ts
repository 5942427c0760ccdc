/**
 * The `kimi` command line: parses flags and subcommands and dispatches to a UI.
 *
 * @module
 */
import { lazyImport } from "../lazy_import.ts";
import { CommanderError } from "@commander-js/extra-typings";
import { VERSION } from "../version.ts";
import { resolvePath, rootCommand, UsageError, validateOptions } from "./options.ts";
import { registerMcpCommands } from "./mcp_commands.ts";

/** The one style of usage errors: the usage line, where help is, then the error. */
function usageText(message: string): string {
  return `Usage: kimi [OPTIONS] COMMAND [ARGS]...\nTry 'kimi --help' for help.\n\nError: ${message}`;
}

function usageFailure(message: string): number {
  console.error(usageText(message));
  return 2;
}

/** Commander's error text (`error: unknown option '--x'\n(Did you mean --y?)`) in our style. */
export function reformatCommanderError(text: string): string {
  const lines = text.trim().split("\n").map((l) => l.trim()).filter(Boolean);
  const head = (lines[0] ?? "").replace(/^error:\s*/, "");
  const msg = head.charAt(0).toUpperCase() + head.slice(1);
  const hint = lines.slice(1).map((l) => l.replace(/^\((.*)\)$/, "$1")).join(" ");
  return usageText(`${msg.replace(/\.$/, "")}.${hint ? ` ${hint}` : ""}`) + "\n";
}

/**
 * The error for words given where a command or option was expected: the nearest subcommand
 * for a near-miss, else how to send the words as a prompt.
 */
export function strayArgumentsMessage(args: string[], commands: string[]): string {
  const first = args[0];
  if (args.length === 1 && !/\s/.test(first)) {
    const near = commands
      .map((c) => ({ c, d: editDistance(first.toLowerCase(), c) }))
      .filter((x) => x.d <= Math.max(1, Math.floor(first.length / 3)) + 1)
      .sort((a, b) => a.d - b.d)[0];
    if (near) return `No such command '${first}'. Did you mean '${near.c}'?`;
  }
  const text = args.join(" ");
  const quoted = `"${text.replace(/(["\\$`])/g, "\\$1")}"`;
  return `'${text}' is not a kimi command. To give it to the agent as a prompt, run ` +
    `kimi -p ${quoted} (or start kimi and type it; add --print to run without the shell).`;
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
  program.configureOutput({
    writeOut: (s) => Deno.stdout.writeSync(new TextEncoder().encode(s)),
    writeErr: (s) => Deno.stderr.writeSync(new TextEncoder().encode(s)),
    outputError: (s, write) => write(reformatCommanderError(s)),
  });
  program.allowExcessArguments(true);
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
  program.action((raw) => {
    if (raw.version) {
      console.log(`kimi, version ${VERSION}`);
      return;
    }
    if (program.args.length > 0) {
      throw new UsageError(
        strayArgumentsMessage(program.args, program.commands.map((c) => c.name())),
      );
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
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return 0;
      return err.exitCode === 0 ? 0 : 2;
    }
    throw err;
  }
}
