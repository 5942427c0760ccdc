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
import { toolError, ToolResultBuilder } from "../lib/tooling/result.ts";
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

/** Builds the Shell tool. */
export const shellTool: ToolFactory = (env): Tool<ShellParams> => {
  const site: ShellSite = { env, shell: resolveShell(env.childEnv().PATH) };
  const { shell } = site;
  return {
    name: "Shell",
    description: renderTemplate(readAsset("tools/shell.md"), {
      SHELL: `${shell.name} (\`${shell.path}\`)`,
    }),
    get parameters() {
      return shellParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.Shell,
    isRoot: env.isRoot,
    resolve(params) {
      if (!params.command.trim()) {
        return new ToolResultBuilder().error("Command cannot be empty.", {
          brief: "Empty command",
        });
      }
      const program = shell.name === "bash" ? "bash" : shell.path;
      const decision = env.scope.check("run", program);
      if (!decision.allowed) {
        return toolError({ message: decision.message, brief: "Sandbox denied" });
      }
      const refusal = env.shellConfinement?.refusal;
      if (refusal) return toolError({ message: refusal, brief: "Shell not confined" });
      const inBackground = params.run_in_background;
      if (inBackground && !env.isRoot) {
        return new ToolResultBuilder().error(
          "Failed to start background task: Background tasks can only be managed by the root agent.",
          { brief: "Start failed" },
        );
      }
      return {
        accesses: [{ kind: "run", program, command: params.command }],
        approval: () => ({
          action: inBackground ? "run background command" : "run command",
          description: `Run ${inBackground ? "background " : ""}command \`${params.command}\``,
          display: approvalDisplay(env, params.command),
          subject: { kind: "shell", command: params.command },
        }),
        execute: (ctx) =>
          inBackground ? background(site, params, ctx) : foreground(site, params, ctx),
      };
    },
  };
};

/** What a Shell call runs with: the agent's environment and the resolved shell. */
interface ShellSite {
  readonly env: ToolEnv;
  readonly shell: ShellInfo;
}

/** The sandbox description when commands run confined, else null. */
function sandboxNote(env: ToolEnv): string | null {
  const c = env.shellConfinement;
  return c && !c.refusal ? c.description : null;
}

/** Blocks shown in the approval request: the command, then the sandbox if any. */
function approvalDisplay(env: ToolEnv, command: string): DisplayBlock[] {
  const sandbox = sandboxNote(env);
  return sandbox ? [shellBlock(command), brief(sandbox)] : [shellBlock(command)];
}

/** The environment of the command: the user's, without a terminal prompt for git. */
function childEnvOf(site: ShellSite): Record<string, string> {
  const base = site.env.childEnv();
  return { GIT_TERMINAL_PROMPT: "0", ...base, SHELL: site.shell.path };
}

/** Run a command in the foreground, streaming its output, within its timeout. */
async function foreground(
  site: ShellSite,
  params: ShellParams,
  ctx: ToolCallContext,
): Promise<ToolReturnValue> {
  ctx.signal.throwIfAborted();
  const sandbox = sandboxNote(site.env);

  const builder = new ToolResultBuilder();
  const tail = new TailLines(BRIEF_TAIL_LINES);
  const emit = (line: string) => {
    builder.write(line);
    tail.push(line);
    site.env.run.toolOutput.publish(ctx.toolCallId, line);
  };
  const lines = { stdout: new LineAssembler(), stderr: new LineAssembler() };
  let proc: Pick<ShellProcess, "done">;
  try {
    const terminal = site.env.terminal;
    proc = terminal
      ? await terminal.start({
        toolCallId: ctx.toolCallId,
        argv: wrapCommand(site.env.run.commands, [site.shell.program, "-c", params.command], {
          cwd: site.env.workDir,
          env: childEnvOf(site),
        }),
        cwd: site.env.workDir,
        env: { GIT_TERMINAL_PROMPT: "0" },
        timeoutMs: params.timeout * 1000,
        signal: ctx.signal,
        onData: (chunk, stream) => lines[stream].push(chunk, emit),
      })
      : startShellProcess({
        command: params.command,
        cwd: site.env.workDir,
        env: childEnvOf(site),
        shell: site.shell,
        wrapper: site.env.run.commands,
        timeoutMs: params.timeout * 1000,
        signal: ctx.signal,
        killGraceMs: site.env.background.killGracePeriodMs,
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

/** Start a command as a background task of the session. */
async function background(
  site: ShellSite,
  params: ShellParams,
  ctx: ToolCallContext,
): Promise<ToolReturnValue> {
  const builder = new ToolResultBuilder();

  const manager = site.env.run.tasks;
  let task;
  try {
    task = await manager.start({
      command: params.command,
      description: params.description.trim(),
      cwd: site.env.workDir,
      env: childEnvOf(site),
      timeoutS: params.timeout,
      toolCallId: ctx.toolCallId,
      shell: site.shell,
      wrapper: site.env.run.commands,
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
  return builder.ok(noting("Background task started.", sandboxNote(site.env)), {
    brief: `Started ${task.id}`,
    display: [taskDisplayBlock(task)],
  });
}
