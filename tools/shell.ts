/**
 * Shell: run a command in bash (or `/bin/sh`), in the foreground or as a background task.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset, renderTemplate } from "../lib/assets/mod.ts";
import { formatTask, taskDisplayBlock } from "../lib/background/task_format.ts";
import { LineAssembler, TailLines } from "../lib/process/line_assembler.ts";
import { wrapCommand } from "../lib/process/command_wrapper.ts";
import { resolveShell, type ShellInfo } from "../lib/process/shell_info.ts";
import { exitCodeOf, type ShellProcess, startShellProcess } from "../lib/process/shell_process.ts";
import { toolError, toolRejected, ToolResultBuilder } from "../lib/tooling/result.ts";
import type {
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolFactory,
  ToolReturnValue,
} from "../lib/tooling/tool.ts";
import { brief, type DisplayBlock, type ShellBlock } from "../lib/wire/display.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Longest foreground timeout, in seconds. */
export const MAX_FOREGROUND_TIMEOUT_S = 300;
/** Longest background timeout, in seconds. */
export const MAX_BACKGROUND_TIMEOUT_S = 86_400;
/** Lines of trailing output quoted in the brief of a failed command. */
const BRIEF_TAIL_LINES = 5;
/** Longest quoted line in that brief. */
const BRIEF_LINE_CHARS = 200;

/** Shell parameters. */
export const shellParamsSchema = lazyValue(() =>
  z.object({
    command: z.string().describe("The shell command line to run."),
    timeout: z.number().int().min(1).max(MAX_BACKGROUND_TIMEOUT_S).default(60).describe(
      "Seconds the command may run before it is killed.",
    ),
    run_in_background: z.boolean().default(false).describe(
      "Start the command as a background task instead of waiting for it.",
    ),
    description: z.string().default("").describe(
      "Short label for the background task; needed when run_in_background is true.",
    ),
  }).superRefine((p, ctx) => {
    if (p.run_in_background && !p.description.trim()) {
      ctx.addIssue({
        code: "custom",
        message: "description is required when run_in_background is true",
      });
    }
    if (!p.run_in_background && p.timeout > MAX_FOREGROUND_TIMEOUT_S) {
      ctx.addIssue({
        code: "custom",
        message: `timeout must be <= ${MAX_FOREGROUND_TIMEOUT_S}s for foreground commands; ` +
          `use run_in_background=true for longer timeouts (up to ${MAX_BACKGROUND_TIMEOUT_S}s)`,
      });
    }
  })
);
/** Shell parameters. */
export type ShellParams = z.infer<ReturnType<typeof shellParamsSchema>>;

function shellBlock(command: string): ShellBlock {
  return { type: "shell", language: "bash", command };
}

/** `message` with the sandbox noted before its final period, e.g. `... (sandboxed: ...).` */
function noting(message: string, sandbox: string | null): string {
  if (!sandbox) return message;
  return `${message.replace(/\.$/, "")} (${sandbox}).`;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** `Failed with exit code: N` plus the last few non-blank output lines. */
function failureBrief(code: number, tail: string[]): string {
  const quoted = tail.map((l) =>
    l.length > BRIEF_LINE_CHARS ? l.slice(0, BRIEF_LINE_CHARS - 1) + "…" : l
  );
  return [`Failed with exit code: ${code}`, ...quoted].join("\n");
}

class ShellTool implements Tool<ShellParams> {
  readonly name = "Shell";
  readonly description: string;
  get parameters() {
    return shellParamsSchema();
  }
  readonly jsonSchema = PARAM_JSON_SCHEMAS.Shell;
  readonly #env: ToolEnv;
  readonly #shell: ShellInfo;

  constructor(env: ToolEnv) {
    this.#env = env;
    this.#shell = resolveShell(env.childEnv().PATH);
    this.description = renderTemplate(readAsset("tools/shell.md"), {
      SHELL: `${this.#shell.name} (\`${this.#shell.path}\`)`,
    });
  }

  /** The sandbox description when commands run confined, else null. */
  #sandbox(): string | null {
    const c = this.#env.shellConfinement;
    return c && !c.refusal ? c.description : null;
  }

  /** Blocks shown in the approval request: the command, then the sandbox if any. */
  #approvalDisplay(command: string): DisplayBlock[] {
    const sandbox = this.#sandbox();
    return sandbox ? [shellBlock(command), brief(sandbox)] : [shellBlock(command)];
  }

  #childEnv(): Record<string, string> {
    const base = this.#env.childEnv();
    return { GIT_TERMINAL_PROMPT: "0", ...base, SHELL: this.#shell.path };
  }

  async call(params: ShellParams, ctx: ToolCallContext): Promise<ToolReturnValue> {
    if (!params.command.trim()) {
      return new ToolResultBuilder().error("Command cannot be empty.", { brief: "Empty command" });
    }
    const decision = this.#env.scope.check(
      "run",
      this.#shell.name === "bash" ? "bash" : this.#shell.path,
    );
    if (!decision.allowed) return toolError({ message: decision.message, brief: "Sandbox denied" });
    const refusal = this.#env.shellConfinement?.refusal;
    if (refusal) return toolError({ message: refusal, brief: "Shell not confined" });
    return params.run_in_background
      ? await this.#background(params, ctx)
      : await this.#foreground(params, ctx);
  }

  async #foreground(params: ShellParams, ctx: ToolCallContext): Promise<ToolReturnValue> {
    const approval = await ctx.requestApproval({
      action: "run command",
      description: `Run command \`${params.command}\``,
      display: this.#approvalDisplay(params.command),
      subject: { kind: "shell", command: params.command },
    });
    if (!approval.approved) {
      return toolRejected(approval.feedback, { isRoot: this.#env.isRoot, denial: approval.denial });
    }
    ctx.signal.throwIfAborted();
    const sandbox = this.#sandbox();

    const builder = new ToolResultBuilder();
    const tail = new TailLines(BRIEF_TAIL_LINES);
    const emit = (line: string) => {
      builder.write(line);
      tail.push(line);
      this.#env.run.toolOutput.publish(ctx.toolCallId, line);
    };
    const lines = { stdout: new LineAssembler(), stderr: new LineAssembler() };
    let proc: Pick<ShellProcess, "done">;
    try {
      const terminal = this.#env.terminal;
      proc = terminal
        ? await terminal.start({
          toolCallId: ctx.toolCallId,
          argv: wrapCommand(this.#env.run.commands, [this.#shell.program, "-c", params.command], {
            cwd: this.#env.workDir,
            env: this.#childEnv(),
          }),
          cwd: this.#env.workDir,
          env: { GIT_TERMINAL_PROMPT: "0" },
          timeoutMs: params.timeout * 1000,
          signal: ctx.signal,
          onData: (chunk, stream) => lines[stream].push(chunk, emit),
        })
        : startShellProcess({
          command: params.command,
          cwd: this.#env.workDir,
          env: this.#childEnv(),
          shell: this.#shell,
          wrapper: this.#env.run.commands,
          timeoutMs: params.timeout * 1000,
          signal: ctx.signal,
          killGraceMs: this.#env.background.killGracePeriodMs,
          onData: (chunk, stream) => lines[stream].push(chunk, emit),
        });
    } catch (e) {
      return builder.error(`Command execution failed: ${errorText(e)}`, {
        brief: "Execution failed",
      });
    }
    const outcome = await proc.done;
    lines.stdout.flush(emit);
    lines.stderr.flush(emit);
    switch (outcome.kind) {
      case "terminated":
        throw ctx.signal.reason ?? new DOMException("The command was cancelled.", "AbortError");
      case "timeout":
        return builder.error(noting(`Command killed by timeout (${params.timeout}s)`, sandbox), {
          brief: `Killed by timeout (${params.timeout}s)`,
        });
      case "exited": {
        const code = exitCodeOf(outcome);
        if (code === 0) return builder.ok(noting("Command executed successfully.", sandbox));
        return builder.error(noting(`Command failed with exit code: ${code}.`, sandbox), {
          brief: failureBrief(code, tail.lines()),
        });
      }
    }
  }

  async #background(params: ShellParams, ctx: ToolCallContext): Promise<ToolReturnValue> {
    const builder = new ToolResultBuilder();
    if (!this.#env.isRoot) {
      return builder.error(
        "Failed to start background task: Background tasks can only be managed by the root agent.",
        { brief: "Start failed" },
      );
    }
    const approval = await ctx.requestApproval({
      action: "run background command",
      description: `Run background command \`${params.command}\``,
      display: this.#approvalDisplay(params.command),
      subject: { kind: "shell", command: params.command },
    });
    if (!approval.approved) {
      return toolRejected(approval.feedback, { isRoot: this.#env.isRoot, denial: approval.denial });
    }

    const manager = this.#env.run.tasks;
    let task;
    try {
      task = await manager.start({
        command: params.command,
        description: params.description.trim(),
        cwd: this.#env.workDir,
        env: this.#childEnv(),
        timeoutS: params.timeout,
        toolCallId: ctx.toolCallId,
        shell: this.#shell,
        wrapper: this.#env.run.commands,
      });
    } catch (e) {
      return builder.error(`Failed to start background task: ${errorText(e)}`, {
        brief: "Start failed",
      });
    }
    builder.write(
      [
        formatTask(task, { includeCommand: true }),
        "automatic_notification: true",
        "next_step: Carry on with other work; a notification arrives by itself when the task ends.",
        "next_step: For a quick look at status and output without waiting, call TaskOutput " +
        "with this task_id; pass block=true only when you really want to wait for it.",
        "next_step: Call TaskStop only if the task has to be cancelled.",
        "human_shell_hint: In the interactive shell the human manages tasks with the single " +
        "slash command /task; do not suggest any other task command.",
      ].join("\n"),
    );
    return builder.ok(noting("Background task started.", this.#sandbox()), {
      brief: `Started ${task.id}`,
      display: [taskDisplayBlock(task)],
    });
  }
}

/** Builds the Shell tool. */
export const shellTool: ToolFactory = (env) => new ShellTool(env);
