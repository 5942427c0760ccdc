/**
 * The root command's flags (reference §1.1), parsed with commander and validated into one
 * typed options object with the reference's error messages.
 *
 * @module
 */
import { Command, InvalidArgumentError, Option } from "./commander.ts";
import { UsageError } from "./usage_errors.ts";

export { UsageError } from "./usage_errors.ts";

/** Which UI runs. */
export type UIMode = "shell" | "print" | "acp" | "wire";

/** Validated root options. */
export interface CliOptions {
  /** UI mode. */
  ui: UIMode;
  /** `--debug`. */
  debug: boolean;
  /** `--verbose`. */
  verbose: boolean;
  /** `--work-dir` (absolute). */
  workDir: string;
  /** `--add-dir`. */
  addDirs: string[];
  /** `--session [ID]`: undefined = not given, "" = picker. */
  session?: string;
  /** `--continue`. */
  continue: boolean;
  /** `--wait-for-session`: wait while another process holds the session. */
  waitForSession: boolean;
  /** `--config` text. */
  configText?: string;
  /** `--config-file`. */
  configFile?: string;
  /** `--model`. */
  model?: string;
  /** `--thinking` / `--no-thinking`. */
  thinking: boolean | null;
  /** `--yolo`. */
  yolo: boolean;
  /** `--plan`. */
  plan: boolean;
  /** `--afk`. */
  afk: boolean;
  /** `--prompt`. */
  prompt?: string;
  /** `--input-format`. */
  inputFormat: "text" | "stream-json";
  /** `--output-format` (`human` when not given). */
  outputFormat: "human" | "text" | "stream-json";
  /** `--final-message-only`. */
  finalMessageOnly: boolean;
  /** `--agent`. */
  agent?: string;
  /** `--agent-file`. */
  agentFile?: string;
  /** `--mcp-config-file`. */
  mcpConfigFiles: string[];
  /** `--mcp-config`. */
  mcpConfigs: string[];
  /** `--skills-dir`. */
  skillsDirs: string[];
  /** `--max-steps-per-turn`. */
  maxStepsPerTurn?: number;
  /** `--max-retries-per-step`. */
  maxRetriesPerStep?: number;
  /** `--max-ralph-iterations`. */
  maxRalphIterations?: number;
}

const collect = (v: string, prev: string[]) => [...prev, v];
const intAtLeast = (min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n)) throw new InvalidArgumentError(`'${v}' is not a valid integer.`);
  if (n < min) throw new InvalidArgumentError(`${v} is not in the range x>=${min}.`);
  return n;
};

/** Build the root command (flags only; subcommands are added by the caller). */
export function rootCommand() {
  return new Command()
    .name("kimi")
    .description("Kimi Code CLI: an AI coding agent in your terminal.")
    .helpOption("-h, --help", "Show this message and exit.")
    .option("-V, --version", "Show the version and exit.")
    .option("--verbose", "Print verbose information.")
    .option("--debug", "Log debug information to the log file.")
    .option("-w, --work-dir <dir>", "Working directory for the agent. Default: current directory.")
    .option(
      "--add-dir <dir>",
      "Add a directory to the workspace (repeatable).",
      collect,
      [] as string[],
    )
    .option("-S, --session [id]", "Resume a session by id (created when missing).")
    .option("-r, --resume [id]", "Same as --session.")
    .option("-C, --continue", "Continue the previous session of the working directory.")
    .option(
      "--wait-for-session",
      "When another kimi process is using the session, wait for it instead of refusing.",
    )
    .option("--config <text>", "Configuration as TOML or JSON text.")
    .option("--config-file <file>", "Configuration file (TOML, or JSON by extension).")
    .option("-m, --model <alias>", "Model to use (a key of `models` in the config).")
    .option("--thinking", "Enable thinking mode.")
    .option("--no-thinking", "Disable thinking mode.")
    .option("-y, --yolo", "Approve every action automatically.")
    .addOption(new Option("--yes").hideHelp())
    .addOption(new Option("--auto-approve").hideHelp())
    .option("--plan", "Start in plan mode.")
    .option("--afk", "Away from keyboard: approve actions and dismiss questions automatically.")
    .option("-p, --prompt <text>", "Run this prompt.")
    .addOption(new Option("-c, --command <text>").hideHelp())
    .option(
      "--print",
      "Run non-interactively and print the result. Print mode approves every action " +
        "automatically (as --yolo) and dismisses questions.",
    )
    .addOption(new Option("--acp").hideHelp())
    .option("--wire", "Serve the wire protocol (JSON-RPC 2.0) on stdin/stdout.")
    .addOption(
      new Option("--input-format <format>", "Input format for --print.").choices(
        ["text", "stream-json"] as const,
      ),
    )
    .addOption(
      new Option(
        "--output-format <format>",
        "Output format for --print. Default: the answer as text (tool activity on stderr); " +
          "text: a transcript of every event in the reference's format; stream-json: JSON lines.",
      ).choices(["human", "text", "stream-json"] as const),
    )
    .option("--final-message-only", "With --print, print only the final assistant message.")
    .option("--quiet", "Same as --print --output-format text --final-message-only.")
    .addOption(
      new Option("--agent <name>", "Built-in agent.").choices(["default", "okabe"] as const),
    )
    .option("--agent-file <file>", "Custom agent spec (YAML).")
    .option("--mcp-config-file <file>", "MCP config file (repeatable).", collect, [] as string[])
    .option("--mcp-config <json>", "MCP config as JSON (repeatable).", collect, [] as string[])
    .option(
      "--skills-dir <dir>",
      "Skills directory (repeatable; replaces discovery).",
      collect,
      [] as string[],
    )
    .option("--max-steps-per-turn <n>", "Maximum steps in one turn.", intAtLeast(1))
    .option("--max-retries-per-step <n>", "Maximum attempts of one LLM call.", intAtLeast(1))
    .option(
      "--max-ralph-iterations <n>",
      "Ralph loop iterations (0 off, -1 unlimited).",
      intAtLeast(-1),
    )
    .showSuggestionAfterError(true);
}

/** Raw options as commander returns them. */
export type RawOptions = ReturnType<ReturnType<typeof rootCommand>["opts"]>;

function combine(groups: [string, boolean][]): void {
  const used = groups.filter(([, on]) => on).map(([n]) => n);
  if (used.length > 1) throw new UsageError(`Cannot combine ${used.join(", ")}.`, used[0]);
}

/** Validate raw options into {@link CliOptions}. */
export function validateOptions(raw: RawOptions, cwd: string): CliOptions {
  const print = Boolean(raw.print || raw.quiet);
  const session = raw.session ?? raw.resume;
  combine([["--print", Boolean(raw.print)], ["--acp", Boolean(raw.acp)], [
    "--wire",
    Boolean(raw.wire),
  ]]);
  combine([["--agent", raw.agent !== undefined], ["--agent-file", raw.agentFile !== undefined]]);
  combine([["--continue", Boolean(raw.continue)], ["--session", session !== undefined]]);
  combine([["--config", raw.config !== undefined], [
    "--config-file",
    raw.configFile !== undefined,
  ]]);
  if (raw.quiet) {
    if (raw.acp || raw.wire) {
      throw new UsageError("Quiet mode cannot be combined with ACP or Wire UI", "--quiet");
    }
    if (raw.outputFormat && raw.outputFormat !== "text" && raw.outputFormat !== "human") {
      throw new UsageError("Quiet mode implies `--output-format text`", "--quiet");
    }
  }
  const ui: UIMode = print ? "print" : raw.acp ? "acp" : raw.wire ? "wire" : "shell";
  if (ui !== "print") {
    if (raw.inputFormat) {
      throw new UsageError("Input format is only supported for print UI", "--input-format");
    }
    if (raw.outputFormat) {
      throw new UsageError("Output format is only supported for print UI", "--output-format");
    }
    if (raw.finalMessageOnly) {
      throw new UsageError(
        "Final-message-only output is only supported for print UI",
        "--final-message-only",
      );
    }
  }
  const promptRaw = raw.prompt ?? raw.command;
  let prompt: string | undefined;
  if (promptRaw !== undefined) {
    prompt = promptRaw.trim();
    if (!prompt) throw new UsageError("Prompt cannot be empty", "--prompt");
  }
  if (raw.config !== undefined && !raw.config.trim()) {
    throw new UsageError("Config cannot be empty", "--config");
  }
  let sessionId: string | undefined;
  if (session !== undefined) {
    sessionId = session === true ? "" : session.trim();
    if (!sessionId && ui !== "shell") {
      throw new UsageError(
        "--session without a session ID is only supported for shell UI",
        "--session",
      );
    }
  }
  const workDir = resolvePath(cwd, raw.workDir ?? ".");
  try {
    if (!Deno.statSync(workDir).isDirectory) {
      throw new UsageError(
        `Invalid value for '--work-dir' / '-w': Directory '${raw.workDir}' is a file.`,
      );
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    if (err instanceof Deno.errors.NotFound) {
      throw new UsageError(
        `Invalid value for '--work-dir' / '-w': Directory '${raw.workDir ?? "."}' does not exist.`,
      );
    }
    throw err;
  }
  for (const [flag, file] of [["--config-file", raw.configFile], ["--agent-file", raw.agentFile]]) {
    if (file === undefined) continue;
    try {
      Deno.statSync(resolvePath(cwd, file));
    } catch {
      throw new UsageError(`Invalid value for '${flag}': File '${file}' does not exist.`);
    }
  }
  return {
    ui,
    debug: Boolean(raw.debug),
    verbose: Boolean(raw.verbose),
    workDir,
    addDirs: raw.addDir.map((d) => resolvePath(cwd, d)),
    session: sessionId,
    continue: Boolean(raw.continue),
    waitForSession: Boolean(raw.waitForSession),
    configText: raw.config,
    configFile: raw.configFile !== undefined ? resolvePath(cwd, raw.configFile) : undefined,
    model: raw.model,
    thinking: raw.thinking === undefined ? null : Boolean(raw.thinking),
    yolo: Boolean(raw.yolo || raw.yes || raw.autoApprove),
    plan: Boolean(raw.plan),
    afk: Boolean(raw.afk),
    prompt,
    inputFormat: raw.inputFormat ?? "text",
    outputFormat: raw.outputFormat ?? "human",
    finalMessageOnly: Boolean(raw.finalMessageOnly || raw.quiet),
    agent: raw.agent,
    agentFile: raw.agentFile !== undefined ? resolvePath(cwd, raw.agentFile) : undefined,
    mcpConfigFiles: raw.mcpConfigFile,
    mcpConfigs: raw.mcpConfig,
    skillsDirs: raw.skillsDir.map((d) => resolvePath(cwd, d)),
    maxStepsPerTurn: raw.maxStepsPerTurn,
    maxRetriesPerStep: raw.maxRetriesPerStep,
    maxRalphIterations: raw.maxRalphIterations,
  };
}

/** Resolve `p` against `base` (no symlink resolution). */
export function resolvePath(base: string, p: string): string {
  if (p.startsWith("~/") || p === "~") p = (Deno.env.get("HOME") ?? "") + p.slice(1);
  const abs = p.startsWith("/") ? p : `${base}/${p}`;
  const out: string[] = [];
  for (const seg of abs.split("/")) {
    if (!seg || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return "/" + out.join("/");
}
