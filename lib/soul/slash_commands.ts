/**
 * Soul-level slash commands (available in every UI, listed by wire `initialize`).
 *
 * @module
 */
import type { NormalizedMessage } from "../llm/message.ts";
import type { LLM, ToolSpec } from "../llm/provider.ts";
import type { FileSnapshots } from "../session/file_snapshots.ts";
import type { UserInput, WireMessage } from "../wire/messages.ts";
import type { ApprovalRuntime } from "./approval.ts";
import type { Context } from "./context.ts";
import type { FlowHost } from "./flow_runner.ts";
import type { PlanMode } from "./plan_mode.ts";
import type { TurnResult } from "./turn.ts";
import type { GoalStore } from "./goal.ts";
import type { SwarmSnapshot } from "../tooling/subagent_service.ts";
import type { ControlPath } from "../tooling/control_paths.ts";
import type { GoalRunEnd } from "./goal_runner.ts";

/**
 * What a command may do to the soul that runs it (the soul implements it; commands never see
 * the soul itself).
 */
export interface CommandHost extends FlowHost {
  /** The context. */
  readonly context: Context;
  /** Approvals (their yolo/afk state). */
  readonly approval: ApprovalRuntime;
  /** File snapshots for undo, when tracked. */
  readonly fileSnapshots: FileSnapshots | null;
  /** Whether plan mode is on. */
  readonly planMode: boolean;
  /** The model, or null when unset. */
  readonly llm: LLM | null;
  /** The signal of the running turn (aborted on cancel). */
  readonly turnSignal: AbortSignal | null;
  /** The tool definitions the model sees (for side questions: declared, never run). */
  toolSpecs(): ToolSpec[];
  /** The session's plan mode, when there is one. */
  readonly plan: PlanMode | null;
  /** Turn plan mode on or off; resolves to the new state. */
  setPlanMode(on: boolean): Promise<boolean>;
  /** Emit a wire message on the running turn. */
  emit(msg: WireMessage): void;
  /** Report the context size on the wire (default: the current token count). */
  emitContextStatus(tokens?: number): void;
  /** Summarise the older context now. */
  compact(opts: { instruction?: string; trigger: "auto" | "manual" }): Promise<void>;
  /** Run `message` as the body of the running turn (the agent loop). */
  turn(message: NormalizedMessage): Promise<TurnResult>;
  /** Run `input` on a throwaway copy of the soul over `context`, nested in the running turn. */
  runWithContext(context: Context, input: UserInput): Promise<TurnResult>;
  /** The session goal, or null when there is no goal mode. */
  readonly goals: GoalStore | null;
  /** Pursue the goal in the running turn (`first`: the goal's first message, if any). */
  runGoal(first: NormalizedMessage | null): Promise<GoalRunEnd>;
}

/** Session services available to commands (absent for souls without a session). */
export interface CommandServices {
  /** Session id. */
  sessionId: string;
  /** Session directory. */
  sessionDir: string;
  /** Share dir. */
  shareDir: string;
  /** Working directory. */
  workDir: string;
  /** Extra workspace directories. */
  additionalDirs(): readonly string[];
  /** Add a workspace directory (persisted). */
  addDir(path: string): Promise<void>;
  /** The running and recent agent swarms (absent: the agent has no subagents). */
  swarms?(): readonly SwarmSnapshot[];
  /** The session's control paths (a file leading to a secret one is never inlined). */
  controlPaths?(): readonly ControlPath[];
}

/** What a command gets when it runs. */
export interface SoulCommandContext {
  /** The soul running the command, seen through what commands may do. */
  soul: CommandHost;
  /** Session services, when the soul belongs to a session. */
  services?: CommandServices;
  /** Text after the command name. */
  args: string;
  /** Show a line of text to the user (a TextPart on the wire). */
  say(text: string): void;
}

/** A slash command. */
export interface SoulCommand {
  /** Name without the slash. */
  name: string;
  /** One-line description. */
  description: string;
  /** Other names. */
  aliases: string[];
  /** Run it. */
  run(ctx: SoulCommandContext): Promise<void>;
}

/**
 * The one message for an unknown slash command, in every front end (the reference's words,
 * `Unknown slash command "/x".`), with the nearest known command when one is close.
 */
export function unknownSlashCommandText(name: string, known: readonly string[]): string {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  const near = best !== null && bestDistance <= Math.max(1, Math.floor(name.length / 3))
    ? ` Did you mean /${best}?`
    : "";
  return `Unknown slash command "/${name}".${near}`;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** `/clear` (`/reset`): rotate the context and start again with the same system prompt. */
export const clearCommand: SoulCommand = {
  name: "clear",
  description: "Clear the context",
  aliases: ["reset"],
  async run({ soul, say }) {
    const prompt = soul.context.systemPrompt ?? "";
    await soul.context.clear();
    await soul.fileSnapshots?.keepSince(0);
    await soul.goals?.contextReset();
    await soul.context.writeSystemPrompt(prompt);
    say("The context has been cleared.");
    soul.emitContextStatus(0);
  },
};

/** `/compact [instruction]`: summarise the older context now. */
export const compactCommand: SoulCommand = {
  name: "compact",
  description: "Compact the context (optionally: what to focus the summary on)",
  aliases: [],
  async run({ soul, args, say }) {
    if (soul.context.nCheckpoints === 0) {
      say("The context is empty.");
      return;
    }
    await soul.compact({ instruction: args, trigger: "manual" });
    say("The context has been compacted.");
    soul.emitContextStatus(soul.context.tokenCount);
  },
};

/** `/yolo`: toggle auto-approval. */
export const yoloCommand: SoulCommand = {
  name: "yolo",
  description: "Toggle YOLO mode (auto-approve all actions)",
  aliases: [],
  async run({ soul, say }) {
    const state = soul.approval.state;
    if (state.yolo) {
      await state.setYolo(false);
      say(
        state.afk
          ? "You only die once! Actions will require approval once afk mode is off."
          : "You only die once! Actions will require approval.",
      );
    } else {
      await state.setYolo(true);
      say("You only live once! All actions will be auto-approved.");
    }
  },
};

/** `/afk`: toggle away-from-keyboard mode. */
export const afkCommand: SoulCommand = {
  name: "afk",
  description: "Toggle afk mode (auto-approve and auto-dismiss questions)",
  aliases: [],
  async run({ soul, say }) {
    const state = soul.approval.state;
    if (state.afk) {
      await state.setAfk(false);
      await soul.context.append({
        role: "user",
        content: [{
          type: "text",
          text: "<system-reminder>\nafk mode is now off: the user is back and can answer " +
            "questions and approve actions again.\n</system-reminder>",
        }],
      });
      say(
        "afk mode disabled. You are back at the terminal." +
          (state.yolo ? " Yolo is still on." : ""),
      );
    } else {
      await state.setAfk(true);
      say("afk mode enabled. AskUserQuestion will be auto-dismissed and tool calls auto-approved.");
    }
  },
};
