/**
 * The soul: runs turns (one per user input) made of steps (one per LLM call), dispatches tool
 * calls as soon as they are streamed, persists the context and streams typed wire messages
 * (reference §6.1–6.3, 6.6, 6.9, 6.10).
 *
 * @module
 */
import { generate, type GenerateResult } from "../llm/generate.ts";
import {
  type ContentPart,
  extractText,
  type NormalizedMessage,
  type TokenUsage,
  type ToolCall,
  usageInput,
  usageTotal,
} from "../llm/message.ts";
import type { LLM, ModelCapability, ToolSpec } from "../llm/provider.ts";
import { estimatePreambleTokens } from "../llm/token_estimate.ts";
import { rejectionOf } from "../tooling/result.ts";
import type { ToolCallContext, ToolReturnValue } from "../tooling/tool.ts";
import type { Wire } from "../wire/channel.ts";
import {
  event,
  type EventPayload,
  partEvent,
  statusUpdate,
  type UserInput,
  type WireMessage,
} from "../wire/messages.ts";
import type { ApprovalRuntime, ApprovalSource } from "./approval.ts";
import type { Context } from "./context.ts";
import { LLMNotSet, LLMNotSupported, MaxStepsReached, RunCancelled } from "./errors.ts";
import { sleep, withRetry } from "./retry.ts";
import { RequestHistory } from "./request_history.ts";
import { compactHistory } from "./compaction.ts";
import { DenwaRenji, dmailMessage, dmailRestoreNote } from "./dmail.ts";
import type { FileSnapshots } from "../session/file_snapshots.ts";
import { isContextOverflowError } from "../llm/errors.ts";
import type { PlanMode, PlanModeSource } from "./plan_mode.ts";
import {
  type CommandServices,
  type SoulCommand,
  unknownSlashCommandText,
} from "./slash_commands.ts";
import type { StopReason, TurnResult } from "./turn.ts";
import { systemReminder, toolResultToMessage } from "./tool_result_message.ts";
import type { Toolset } from "./toolset.ts";
import { DEFAULT_PARALLEL_TOOL_CALLS } from "./tool_scheduler.ts";
import { runRalphLoop } from "./flow_runner.ts";
import type { HookEngine } from "../hooks/engine.ts";
import * as soulHooks from "../hooks/soul_hooks.ts";
import type { GoalStore } from "./goal.ts";
import { type GoalRunEnd, pursueGoal } from "./goal_runner.ts";

/** Loop limits (config `loop_control`). */
export interface LoopControl {
  /** Steps allowed per turn. */
  maxStepsPerTurn: number;
  /** Attempts per LLM call. */
  maxRetriesPerStep: number;
  /** Tokens kept free for the next reply; compaction starts when they no longer fit. */
  reservedContextSize?: number;
  /** Fraction of the context window at which compaction starts. */
  compactionTriggerRatio?: number;
  /** Ralph loop iterations for user input (0 off, -1 unlimited; root agent only). */
  maxRalphIterations?: number;
}

/** Options of {@link KimiSoul}. */
export interface SoulOptions {
  /** Agent name ("" for the default agent). */
  name: string;
  /** The model, or null when none is configured. */
  llm: LLM | null;
  /** The context. */
  context: Context;
  /** The tools. */
  toolset: Toolset;
  /** Approvals. */
  approval: ApprovalRuntime;
  /** Loop limits. */
  loop: LoopControl;
  /** Whether this is the root agent (false for subagents). */
  isRoot: boolean;
  /** Whether checkpoints add `CHECKPOINT n` markers (agents with SendDMail). */
  checkpointMarkers?: boolean;
  /** Whether to skip the afk reminder injection. */
  skipAfkPromptInjection?: boolean;
  /** Soul-level slash commands. */
  commands?: readonly SoulCommand[];
  /** Notes re-inserted after compaction so the agent keeps its goal (todo list, plan). */
  compactionNotes?: () => Promise<string[]>;
  /** Session services handed to slash commands. */
  commandServices?: CommandServices;
  /** Snapshots of the files the tools change (file undo); absent: not tracked. */
  fileSnapshots?: FileSnapshots;
  /** Called after each non-command turn (e.g. to title the session). */
  afterUserTurn?: (input: UserInput) => Promise<void>;
  /** Plan mode of the session (root agent); without it plan mode is a plain in-memory flag. */
  plan?: PlanMode;
  /** MCP loading: the agent loop waits for it at the start of a turn (emits MCPLoading*). */
  mcp?: { waitReady(emit: (msg: WireMessage) => void, signal?: AbortSignal): Promise<void> };
  /** Lifecycle hooks (config `[[hooks]]` + wire subscriptions); absent: no hooks run. */
  hooks?: HookEngine;
  /**
   * Subagent identity stamped on this soul's approval requests (subagents only); `kind`/`id`
   * replace the per-turn `foreground_turn` source (background subagents: `background_agent`
   * with the task id).
   */
  approvalSource?:
    & Pick<ApprovalSource, "agentId" | "subagentType">
    & Partial<Pick<ApprovalSource, "kind" | "id">>;
  /**
   * Pending notifications (root only): texts drained at the start of each step and appended
   * to the context as user messages (e.g. finished background tasks).
   */
  notifications?: () => Promise<string[]>;
  /** The session goal (root agent with a session); absent: no goal mode. */
  goals?: GoalStore;
}

/** Matches a slash command at the start of the input. */
const SLASH_RE = /^\/([A-Za-z0-9_-]+(?::[A-Za-z0-9_-]+)*)(?:\s+([\s\S]*))?$/;

/** Parse `/name args` from user text; null when it is not a command. */
export function parseSlashCommand(text: string): { name: string; args: string } | null {
  const m = text.trim().match(SLASH_RE);
  if (!m) return null;
  return { name: m[1], args: (m[2] ?? "").trim() };
}

/** The agent core. */
export class KimiSoul {
  /** Agent name. */
  readonly name: string;
  /** The context. */
  readonly context: Context;
  /** The tools. */
  readonly toolset: Toolset;
  /** Approvals. */
  readonly approval: ApprovalRuntime;
  /** Loop limits (mutable by flags and commands). */
  readonly loop: LoopControl;
  /** Whether this is the root agent. */
  readonly isRoot: boolean;
  /** Snapshots of the files the tools changed (`/undo`, D-Mail `restore_files`), or null. */
  readonly fileSnapshots: FileSnapshots | null;
  /** Lifecycle hooks, or null when this soul runs none. */
  readonly hooks: HookEngine | null;
  #llm: LLM | null;
  #commands: readonly SoulCommand[];
  #checkpointMarkers: boolean;
  #skipAfk: boolean;
  #wire: Wire | null = null;
  #signal: AbortSignal | null = null;
  #source: ApprovalSource | null = null;
  #sourceIdentity: NonNullable<SoulOptions["approvalSource"]>;
  #notifications: (() => Promise<string[]>) | null;
  #steers: UserInput[] = [];
  #planMode = false;
  #plan: PlanMode | null;
  #mcp: SoulOptions["mcp"] | null;
  #compactionNotes: () => Promise<string[]>;
  #afterUserTurn: (input: UserInput) => Promise<void>;
  #commandServices: CommandServices | undefined;
  #goals: GoalStore | null;
  #tokensUsed = 0;
  /** The request form of the history, normalized once per message. */
  readonly #requestHistory = new RequestHistory();
  /** Pending D-Mail of the current step. */
  readonly denwaRenji: DenwaRenji = new DenwaRenji(() => this.context.nCheckpoints);

  /** Create a soul. */
  constructor(opts: SoulOptions) {
    this.name = opts.name;
    this.#llm = opts.llm;
    this.context = opts.context;
    this.toolset = opts.toolset;
    this.approval = opts.approval;
    this.loop = opts.loop;
    this.isRoot = opts.isRoot;
    this.fileSnapshots = opts.fileSnapshots ?? null;
    this.#commands = opts.commands ?? [];
    this.#checkpointMarkers = opts.checkpointMarkers ?? false;
    this.#skipAfk = opts.skipAfkPromptInjection ?? false;
    this.#compactionNotes = opts.compactionNotes ?? (() => Promise.resolve([]));
    this.#afterUserTurn = opts.afterUserTurn ?? (() => Promise.resolve());
    this.#commandServices = opts.commandServices;
    this.#plan = opts.plan ?? null;
    this.#mcp = opts.mcp ?? null;
    this.#sourceIdentity = opts.approvalSource ?? {};
    this.#notifications = opts.notifications ?? null;
    this.#goals = opts.goals ?? null;
    this.hooks = opts.hooks ?? null;
    if (this.hooks) {
      this.toolset.beforeCall = (call, args) => soulHooks.preToolUse(this.#hookSite()!, call, args);
      this.toolset.afterCall = (call, args, out) =>
        soulHooks.firePostToolUse(this.#hookSite()!, call, args, out);
    }
  }

  /** The model, or null. */
  get llm(): LLM | null {
    return this.#llm;
  }

  /** Replace the model (e.g. `/model`). */
  setLLM(llm: LLM | null): void {
    this.#llm = llm;
  }

  /** Soul-level slash commands. */
  get commands(): readonly SoulCommand[] {
    return this.#commands;
  }

  /** The signal of the running turn, or null between turns. */
  get turnSignal(): AbortSignal | null {
    return this.#signal;
  }

  /** The tool definitions the model sees. */
  toolSpecs(): ToolSpec[] {
    return this.toolset.specs();
  }

  /** Whether plan mode is on. */
  get planMode(): boolean {
    return this.#plan ? this.#plan.active : this.#planMode;
  }

  /** The session's plan mode (plan file, reminders), when this soul has one. */
  get plan(): PlanMode | null {
    return this.#plan;
  }

  /**
   * Set plan mode (persisted when the soul has a {@link PlanMode}). A manual switch on schedules
   * the activation reminder for the next step. Resolves with the new state.
   */
  async setPlanMode(on: boolean, source: PlanModeSource = "manual"): Promise<boolean> {
    if (this.#plan) return await this.#plan.set(on, source);
    this.#planMode = on;
    return on;
  }

  /** The session goal, or null when this soul has no goal mode. */
  get goals(): GoalStore | null {
    return this.#goals;
  }

  /** Tokens the model reported for this soul's steps so far (goal budgets). */
  get tokensUsed(): number {
    return this.#tokensUsed;
  }

  /** Checkpoints of the live context. */
  get nCheckpoints(): number {
    return this.context.nCheckpoints;
  }

  /** Whether the running turn was cancelled. */
  get cancelled(): boolean {
    return this.#signal?.aborted ?? false;
  }

  /**
   * Pursue the session goal inside the running turn: `first` (the goal's first message) is
   * run as the turn's body, then continuation turns follow while the goal is active.
   */
  async runGoal(first: NormalizedMessage | null): Promise<GoalRunEnd> {
    if (!this.#goals) throw new Error("This agent has no goal mode.");
    if (!this.#wire) throw new Error("runGoal needs a running turn");
    return await pursueGoal(this, this.#goals, first);
  }

  /** Whether a turn is running. */
  get busy(): boolean {
    return this.#wire !== null;
  }

  /** The approval source of the running turn. */
  get approvalSource(): ApprovalSource | null {
    return this.#source;
  }

  /** Send a message on the running turn's wire (dropped between turns). */
  emit(msg: WireMessage): void {
    this.#wire?.send(msg);
  }

  /** Where this soul's hooks run (events on this turn's wire, cancelled with it), or null. */
  #hookSite(): soulHooks.HookSite | null {
    if (!this.hooks) return null;
    return { hooks: this.hooks, emit: (e) => this.emit(e), signal: this.#signal ?? undefined };
  }

  /**
   * Run `input` as a turn of a throwaway copy of this soul (same model, tools, approvals and
   * limits) over `context`, on this turn's wire (nested TurnBegin/TurnEnd), as `/init` does.
   * Only valid while this soul runs a turn.
   */
  runWithContext(context: Context, input: UserInput): Promise<TurnResult> {
    if (!this.#wire || !this.#signal) throw new Error("runWithContext needs a running turn");
    const child = new KimiSoul({
      name: this.name,
      llm: this.llm,
      context,
      toolset: this.toolset,
      approval: this.approval,
      loop: this.loop,
      isRoot: true,
    });
    return child.run(input, { wire: this.#wire, signal: this.#signal });
  }

  /**
   * Run `prompt` as a nested turn inside the running turn (its own TurnBegin/TurnEnd), as
   * flows and the Ralph loop do for each node.
   */
  async runNestedTurn(prompt: string | ContentPart[]): Promise<TurnResult> {
    this.emit(event("TurnBegin", { user_input: prompt }));
    try {
      return await this.turn(userMessage(prompt));
    } finally {
      this.emit(event("TurnEnd", {}));
    }
  }

  /**
   * Report the context size on the wire (after /clear, /compact, /undo): usage, tokens and
   * window, everything else null.
   */
  emitContextStatus(tokens: number = this.context.tokenCountWithPending): void {
    const max = this.#llm?.maxContextSize ?? null;
    this.emit(statusUpdate({
      context_usage: max ? tokens / max : null,
      context_tokens: tokens,
      max_context_tokens: max,
    }));
  }

  /** Queue input to be consumed after the current step. */
  steer(input: UserInput): void {
    this.#steers.push(input);
  }

  /**
   * Run one turn. Always emits `TurnBegin` first and `TurnEnd` last. Throws LLMNotSet,
   * LLMNotSupported, MaxStepsReached, RunCancelled or provider errors.
   */
  async run(input: UserInput, opts: { wire: Wire; signal: AbortSignal }): Promise<TurnResult> {
    if (this.#wire) throw new Error("An agent turn is already in progress");
    this.#wire = opts.wire;
    this.#signal = opts.signal;
    this.#source = {
      kind: "foreground_turn",
      id: crypto.randomUUID(),
      ...this.#sourceIdentity,
    };
    let begun = false;
    let isCommand = false;
    try {
      const site = this.#hookSite();
      const blocked = site ? await soulHooks.userPromptBlock(site, input) : null;
      if (blocked !== null) {
        this.emit(event("TurnBegin", { user_input: input }));
        begun = true;
        isCommand = true; // a blocked prompt does not title the session
        this.emit(partEvent({ type: "text", text: blocked }));
        return { reason: "prompt_blocked", finalMessage: null, steps: 0 };
      }
      this.emit(event("TurnBegin", { user_input: input }));
      begun = true;
      const text = typeof input === "string" ? input : extractText(input, " ");
      const cmd = parseSlashCommand(text);
      if (cmd) {
        isCommand = true;
        await this.#runCommand(cmd.name, cmd.args);
        return (await this.#stopHook()) ?? { reason: "command", finalMessage: null, steps: 0 };
      }
      this.#steers = [];
      if (this.isRoot && this.#goals?.active) {
        const run = await this.runGoal(userMessage(input));
        return (await this.#stopHook()) ?? run.result;
      }
      const ralph = this.isRoot ? this.loop.maxRalphIterations ?? 0 : 0;
      let result = ralph !== 0
        ? await runRalphLoop(this, input, ralph)
        : await this.turn(userMessage(input));
      // The model started a goal (CreateGoal) during the turn: keep going toward it.
      if (this.isRoot && this.#goals?.active) result = (await this.runGoal(null)).result;
      return (await this.#stopHook()) ?? result;
    } catch (err) {
      if (opts.signal.aborted) {
        if (begun && !isCommand) await this.#noteInterruption().catch(() => {});
        throw new RunCancelled();
      }
      throw err;
    } finally {
      if (begun) this.#wire?.send(event("TurnEnd", {}));
      if (this.#source) this.approval.cancelSource(this.#source.id);
      this.#wire = null;
      this.#signal = null;
      this.#source = null;
      if (begun && !isCommand) await this.#afterUserTurn(input).catch(() => {});
    }
  }

  /**
   * After the user interrupted a prompt's turn: the prompt stays in the context and the
   * interrupted step's answer is not kept (reference §6.9); a short user message,
   * {@link INTERRUPTED_BY_USER}, then tells the model so, or the next prompt would reach it glued
   * to the interrupted one as a single request.
   */
  async #noteInterruption(): Promise<void> {
    const last = this.context.history.at(-1);
    if (!last || extractText(last.content, "") === INTERRUPTED_BY_USER) return;
    await this.context.append({
      role: "user",
      content: [{ type: "text", text: INTERRUPTED_BY_USER }],
    });
  }

  /** The Stop hook (once per turn): a block with a reason runs one more turn with it. */
  async #stopHook(): Promise<TurnResult | null> {
    const site = this.#hookSite();
    const reason = site ? await soulHooks.stopHookReason(site) : null;
    return reason === null ? null : await this.turn(userMessage(reason));
  }

  async #runCommand(name: string, args: string): Promise<void> {
    const cmd = this.#commands.find((c) => c.name === name || c.aliases.includes(name));
    if (!cmd) {
      const known = this.#commands.flatMap((c) => [c.name, ...c.aliases]);
      this.emit(partEvent({ type: "text", text: unknownSlashCommandText(name, known) }));
      return;
    }
    await cmd.run({
      soul: this,
      args,
      services: this.#commandServices,
      say: (text) => this.emit(partEvent({ type: "text", text })),
    });
  }

  /** Run the agent loop for one user message (used by turns, flows and commands). */
  async turn(message: NormalizedMessage): Promise<TurnResult> {
    const llm = this.#llm;
    if (!llm) throw new LLMNotSet();
    const needed = requiredCapabilities(message.content);
    const missing = needed.filter((c) => !llm.capabilities.has(c));
    if (missing.length > 0) throw new LLMNotSupported(llm.provider.modelName, missing);
    this.toolset.resetRepeatTracking();
    this.#goals?.takeStopRequest();
    await this.context.checkpoint(this.#checkpointMarkers);
    await this.context.append(message);
    return await this.#agentLoop(llm);
  }

  async #agentLoop(llm: LLM): Promise<TurnResult> {
    await this.#mcp?.waitReady((m) => this.emit(m), this.#signal ?? undefined);
    for (let n = 1;; n++) {
      if (n > this.loop.maxStepsPerTurn) throw new MaxStepsReached(this.loop.maxStepsPerTurn);
      this.emit(event("StepBegin", { n }));
      if (this.#needsCompaction(llm)) await this.compact({ trigger: "auto" });
      await this.context.checkpoint(this.#checkpointMarkers);
      let outcome: StepOutcome;
      try {
        try {
          outcome = await this.#step(llm, n);
        } catch (err) {
          if (this.#signal?.aborted || !isContextOverflowError(err)) throw err;
          // The prompt no longer fits: compact once and try the step again.
          await this.compact({ trigger: "auto" });
          outcome = await this.#step(llm, n);
        }
      } catch (err) {
        if (!this.#signal?.aborted) {
          this.emit(event("StepInterrupted", {}));
          const site = this.#hookSite();
          if (site) soulHooks.fireStopFailure(site, err);
        }
        throw err;
      }
      const dmail = this.denwaRenji.take();
      if (dmail && outcome.stop !== "tool_rejected") {
        await this.context.revertTo(dmail.checkpointId);
        let note = "";
        if (dmail.restoreFiles && this.fileSnapshots) {
          note = dmailRestoreNote(await this.fileSnapshots.restoreSince(dmail.checkpointId));
        } else await this.fileSnapshots?.keepSince(dmail.checkpointId);
        this.toolset.resetRepeatTracking();
        await this.context.checkpoint(this.#checkpointMarkers);
        await this.context.append({
          role: "user",
          content: [
            { type: "text", text: dmailMessage(dmail.message) },
            ...(note ? [{ type: "text" as const, text: note }] : []),
          ],
        });
        continue;
      }
      const steered = await this.#drainSteers();
      if (outcome.stop && !steered) {
        return { reason: outcome.stop, finalMessage: outcome.message, steps: n };
      }
    }
  }

  #needsCompaction(llm: LLM): boolean {
    const tokens = this.context.tokenCountWithPending;
    const ratio = this.loop.compactionTriggerRatio ?? 0.85;
    const reserved = this.loop.reservedContextSize ?? 50_000;
    return tokens >= llm.maxContextSize * ratio || tokens + reserved >= llm.maxContextSize;
  }

  /**
   * Compact the context: older messages are summarised by the model, the last exchanges kept,
   * and the todo list / plan re-inserted. Emits CompactionBegin/CompactionEnd.
   */
  async compact(opts: { instruction?: string; trigger: "auto" | "manual" }): Promise<void> {
    const llm = this.#llm;
    if (!llm) throw new LLMNotSet();
    const signal = this.#signal ?? undefined;
    const hookSite = this.#hookSite();
    const hookTrigger = soulHooks.compactTrigger(opts);
    if (hookSite) await soulHooks.preCompact(hookSite, hookTrigger, this.context.tokenCount);
    this.emit(event("CompactionBegin", {}));
    const extraNotes = await this.#compactionNotes();
    const result = await withRetry(
      () =>
        compactHistory(llm.provider, this.context.history, {
          instruction: opts.instruction,
          signal,
          extraNotes,
        }),
      { maxAttempts: this.loop.maxRetriesPerStep, signal },
    );
    const prompt = this.context.systemPrompt ?? "";
    await this.context.clear();
    await this.fileSnapshots?.keepSince(0);
    await this.#goals?.contextReset();
    await this.context.writeSystemPrompt(prompt);
    await this.context.checkpoint(this.#checkpointMarkers);
    await this.context.append(...result.messages);
    const chars = (ms: readonly NormalizedMessage[]) =>
      ms.reduce((n, m) => n + extractText(m.content).length, 0);
    const preserved = result.messages.slice(1);
    // What the reference counts: the compacted context (the summary's output tokens and the
    // preserved messages), not the system prompt or the tool schemas.
    const tokens = result.usage
      ? result.usage.output + Math.floor(chars(preserved) / 4)
      : Math.floor(chars(result.messages) / 4);
    await this.context.updateTokenCount(tokens);
    this.emit(event("CompactionEnd", {}));
    if (hookSite) soulHooks.firePostCompact(hookSite, hookTrigger, tokens);
  }

  async #drainSteers(): Promise<boolean> {
    if (this.#steers.length === 0) return false;
    const items = this.#steers;
    this.#steers = [];
    for (const input of items) {
      await this.context.append(userMessage(input));
      this.emit(event("SteerInput", { user_input: input }));
    }
    return true;
  }

  #injections(): string[] {
    const out: string[] = [];
    if (this.isRoot && this.approval.state.isAfk && !this.#skipAfk) {
      out.push(
        "The user is away (afk mode): nobody can answer questions or review plans right now. " +
          "Make reasonable decisions yourself and keep going until the task is done.",
      );
    }
    return out;
  }

  async #step(llm: LLM, n: number): Promise<StepOutcome> {
    const signal = this.#signal!;
    if (this.isRoot && this.#notifications) {
      for (const text of await this.#notifications()) {
        await this.context.append({ role: "user", content: [{ type: "text", text }] });
      }
    }
    const planReminder = this.isRoot && this.#plan
      ? await this.#plan.reminder(this.context.history, { afk: this.approval.state.isAfk })
      : null;
    if (planReminder) {
      // Kept in the context (unlike the afk reminder) so later steps still see the rules and
      // the schedule can count the assistant turns since the last one.
      await this.context.append({
        role: "user",
        content: [{ type: "text", text: systemReminder(planReminder) }],
      });
    }
    const injections = this.#injections();
    const built = this.#requestHistory.build(
      this.context.history,
      injections.length > 0
        ? [{
          role: "user",
          content: [{ type: "text", text: injections.map(systemReminder).join("\n") }],
        }]
        : [],
    );
    const normalized = built.messages;
    const systemPrompt = this.context.systemPrompt ?? "";
    const tools = this.toolset.specs();
    let maxCompletionTokens: number | undefined;
    if (llm.provider.name === "kimi" && llm.completionTokenCap !== 0) {
      const estimate = Math.max(
        this.context.tokenCountWithPending,
        estimatePreambleTokens(systemPrompt, tools) + built.tokens,
      ) + 1024;
      const cap = llm.completionTokenCap && llm.completionTokenCap > 0
        ? llm.completionTokenCap
        : llm.maxContextSize;
      maxCompletionTokens = Math.max(1, Math.min(cap, llm.maxContextSize - estimate));
    }

    let calls: ToolCall[] = [];
    let pending: Promise<ToolReturnValue>[] = [];
    // Tools start while the reply streams. Each attempt has its own abort, so the tools of an
    // attempt that failed (a retry, a cancel) are stopped rather than left running; a bounded
    // number run at once, and none starts once the step is aborted.
    let attempt: AbortController | null = null;
    this.toolset.beginStep();
    const result: GenerateResult = await withRetry(
      () => {
        attempt?.abort(new RunCancelled());
        attempt = new AbortController();
        const stepSignal = AbortSignal.any([signal, attempt.signal]);
        calls = [];
        pending = [];
        return generate(llm.provider, {
          systemPrompt,
          tools,
          history: normalized,
          signal,
          maxCompletionTokens,
        }, {
          onPart: (p) => {
            this.emit(partEvent(p));
            return this.#wire?.room();
          },
          // A text or think part that ended at another kind of part was just joined by the wire
          // for its merged event: the message takes that string rather than a second copy.
          joinText: (pieces) => this.#wire?.takeJoinedText(pieces),
          onToolCall: (call) => {
            calls.push(call);
            // The toolset bounds how many run at once and starts none once the step aborted.
            const run = this.#runTool(call, stepSignal);
            // Awaited below when the step goes on; when it does not, its failure is expected.
            run.catch(() => {});
            pending.push(run);
          },
        });
      },
      {
        maxAttempts: this.loop.maxRetriesPerStep,
        signal,
        onRetry: (r) =>
          this.emit(event("StepRetry", {
            n,
            next_attempt: r.nextAttempt,
            max_attempts: r.maxAttempts,
            wait_s: r.waitS,
            error_type: r.errorType,
            status_code: r.statusCode,
          })),
      },
    ).catch((err) => {
      (attempt as AbortController | null)?.abort(err);
      throw err;
    });

    // The merged wire event of the reply's last text (or think) part is the message's own
    // string, not a second joined copy of a (possibly many-megabyte) streamed text.
    const lastPart = result.message.content.at(-1);
    if (lastPart?.type === "text") this.#wire?.adoptText(lastPart.text);
    else if (lastPart?.type === "think") this.#wire?.adoptText(lastPart.think);
    this.emit(event("StatusUpdate", this.#statusPayload(llm, result.usage, result.id)));
    if (result.usage) {
      this.#tokensUsed += usageTotal(result.usage);
      await this.context.updateTokenCount(usageInput(result.usage));
    }

    const planBefore = this.planMode;
    const results = await raceAbort(Promise.all(pending), signal);
    this.toolset.endStep(calls.length > 0);
    if (this.planMode !== planBefore) {
      this.emit(statusUpdate({ plan_mode: this.planMode }));
    }

    await this.context.append(result.message);
    if (result.usage) await this.context.updateTokenCount(usageTotal(result.usage));
    await this.context.append(...calls.map((c, i) => toolResultToMessage(c.id, results[i])));

    if (this.isRoot && results.some((rv) => rejectionOf(rv)?.feedback === "")) {
      return { stop: "tool_rejected", message: null };
    }
    if (this.toolset.forceStopRequested) return { stop: "tool_call_repeat", message: null };
    if (calls.length > 0 && this.#goals?.takeStopRequest()) {
      return { stop: "goal_stopped", message: null };
    }
    if (calls.length > 0) return { stop: null, message: null };
    return { stop: "no_tool_calls", message: result.message };
  }

  #statusPayload(
    llm: LLM,
    usage: TokenUsage | null,
    messageId: string | null,
  ): EventPayload<"StatusUpdate"> {
    const input = usage ? usageInput(usage) : null;
    return {
      context_usage: input !== null ? input / llm.maxContextSize : null,
      context_tokens: input,
      max_context_tokens: input !== null ? llm.maxContextSize : null,
      token_usage: usage,
      message_id: messageId,
      plan_mode: this.planMode,
      mcp_status: null,
    };
  }

  async #runTool(call: ToolCall, signal: AbortSignal): Promise<ToolReturnValue> {
    const source = this.#source!;
    const ctx: ToolCallContext = {
      toolCallId: call.id,
      rawArguments: call.function.arguments,
      signal,
      requestApproval: (ask) =>
        this.approval.request({ sender: call.function.name, toolCallId: call.id, ask, source }),
    };
    const rv = await this.toolset.call(call, ctx);
    if (!signal.aborted) {
      this.emit(event("ToolResult", { tool_call_id: call.id, return_value: rv }));
    }
    return rv;
  }
}

interface StepOutcome {
  stop: StopReason | null;
  message: NormalizedMessage | null;
}

/** The user message recorded after an interrupted turn (the words Claude Code uses). */
export const INTERRUPTED_BY_USER = "[Request interrupted by user]";

/** A user message from user input. */
export function userMessage(input: UserInput): NormalizedMessage {
  return {
    role: "user",
    content: typeof input === "string" ? [{ type: "text", text: input }] : input,
  };
}

function requiredCapabilities(parts: readonly ContentPart[]): ModelCapability[] {
  const out = new Set<ModelCapability>();
  for (const p of parts) {
    if (p.type === "image_url") out.add("image_in");
    else if (p.type === "video_url") out.add("video_in");
    else if (p.type === "think") out.add("thinking");
  }
  return [...out];
}

/**
 * How many tool calls of one reply run at once by default (the rest wait for a free slot;
 * config `loop_control.max_parallel_tool_calls`). The toolset's scheduler applies it.
 */
export const MAX_PARALLEL_TOOL_CALLS = DEFAULT_PARALLEL_TOOL_CALLS;

async function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  p.catch(() => {}); // its outcome no longer matters once the race is lost
  if (signal.aborted) throw signal.reason;
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([p, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

export { sleep };
