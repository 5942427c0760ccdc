/**
 * Where the soul meets the hook engine: the input each lifecycle event carries and what the
 * soul does with the verdict (reference §6.1 UserPromptSubmit/Stop, §6.2 StopFailure,
 * §6.5 PreCompact/PostCompact, §6.10 PreToolUse/PostToolUse/PostToolUseFailure, §7.10
 * SubagentStart/SubagentStop, Notification). Each helper is a few lines at its call site.
 *
 * Input fields per event (besides `hook_event_name`, `session_id`, `cwd`) and the target the
 * matchers are searched in:
 * - PreToolUse: `tool_name, tool_input, tool_call_id`; target = tool name.
 * - PostToolUse: `tool_name, tool_input, tool_output, tool_call_id`; target = tool name.
 * - PostToolUseFailure: `tool_name, tool_input, error, tool_call_id`; target = tool name.
 * - UserPromptSubmit: `prompt` ("" for content-part input); target = the prompt.
 * - Stop: `stop_hook_active`; target "".
 * - StopFailure: `error_type, error_message`; target = error type.
 * - SessionStart: `source` (`startup`|`resume`); target = source.
 * - SessionEnd: `reason`; target = reason.
 * - SubagentStart: `agent_name, prompt`; SubagentStop: `agent_name, response`; target = agent name.
 * - PreCompact: `trigger, token_count`; PostCompact: `trigger, estimated_token_count`;
 *   target = trigger (`auto`|`manual`|`manual-with-prompt`).
 * - Notification: `sink, notification_type, title, body, severity`; target = notification type.
 *
 * @module
 */
import type { ToolCall } from "../llm/message.ts";
import type { ToolReturnValue } from "../tooling/tool.ts";
import type { UserInput, WireEvent } from "../wire/messages.ts";
import type { HookEngine } from "./engine.ts";

/** Where a soul's hook runs report and what cancels them. */
export interface HookSite {
  /** The engine. */
  readonly hooks: HookEngine;
  /** Emits HookTriggered/HookResolved on the running turn's wire. */
  emit(event: WireEvent): void;
  /** The running turn's cancellation, if any. */
  readonly signal?: AbortSignal;
}

/** Text shown instead of running a prompt that a UserPromptSubmit hook blocked. */
export const PROMPT_BLOCKED_TEXT = "Prompt blocked by hook.";

/**
 * UserPromptSubmit: resolves with the text to show when a hook blocks the prompt (its reason,
 * or {@link PROMPT_BLOCKED_TEXT}), or null when the prompt may run.
 */
export async function userPromptBlock(site: HookSite, input: UserInput): Promise<string | null> {
  const prompt = typeof input === "string" ? input : "";
  const verdict = await site.hooks.trigger("UserPromptSubmit", {
    target: prompt,
    input: { prompt },
    emit: (e) => site.emit(e),
    signal: site.signal,
  });
  if (verdict.action !== "block") return null;
  return verdict.reason || PROMPT_BLOCKED_TEXT;
}

/**
 * Stop: when a hook blocks with a reason, resolves with that reason (the soul runs one more
 * turn with it as the user message); otherwise null.
 */
export async function stopHookReason(site: HookSite): Promise<string | null> {
  const verdict = await site.hooks.trigger("Stop", {
    input: { stop_hook_active: false },
    emit: (e) => site.emit(e),
    signal: site.signal,
  });
  const blocked = verdict.results.find((r) => r.action === "block" && r.reason);
  return blocked ? blocked.reason : null;
}

/** StopFailure (fire-and-forget) for a step that failed with `err`. */
export function fireStopFailure(site: HookSite, err: unknown): void {
  const errorType = errorTypeName(err);
  site.hooks.fire("StopFailure", {
    target: errorType,
    input: { error_type: errorType, error_message: errorMessage(err) },
    emit: (e) => site.emit(e),
  });
}

/** The compaction trigger name hooks see. */
export function compactTrigger(opts: { trigger: "auto" | "manual"; instruction?: string }) {
  if (opts.trigger === "auto") return "auto";
  return opts.instruction ? "manual-with-prompt" : "manual";
}

/** PreCompact (awaited; its verdict does not stop the compaction). */
export async function preCompact(site: HookSite, trigger: string, tokenCount: number) {
  await site.hooks.trigger("PreCompact", {
    target: trigger,
    input: { trigger, token_count: tokenCount },
    emit: (e) => site.emit(e),
    signal: site.signal,
  });
}

/** PostCompact (fire-and-forget). */
export function firePostCompact(site: HookSite, trigger: string, estimatedTokens: number): void {
  site.hooks.fire("PostCompact", {
    target: trigger,
    input: { trigger, estimated_token_count: estimatedTokens },
    emit: (e) => site.emit(e),
  });
}

/** Outcome of a tool that ran: its result, or the exception it threw. */
export type ToolRunOutcome = { result: ToolReturnValue } | { error: string };

/** PreToolUse: whether to block a tool call, with the hook's reason. */
export async function preToolUse(
  site: HookSite,
  call: ToolCall,
  args: Record<string, unknown>,
): Promise<{ block: true; reason: string } | { block: false }> {
  const name = call.function.name;
  const verdict = await site.hooks.trigger("PreToolUse", {
    target: name,
    input: { tool_name: name, tool_input: plainArgs(args), tool_call_id: call.id },
    emit: (e) => site.emit(e),
    signal: site.signal,
  });
  return verdict.action === "block" ? { block: true, reason: verdict.reason } : { block: false };
}

/** PostToolUse / PostToolUseFailure (fire-and-forget) after a tool ran. */
export function firePostToolUse(
  site: HookSite,
  call: ToolCall,
  args: Record<string, unknown>,
  outcome: ToolRunOutcome,
): void {
  const name = call.function.name;
  const base = { tool_name: name, tool_input: plainArgs(args) };
  if ("error" in outcome) {
    site.hooks.fire("PostToolUseFailure", {
      target: name,
      input: { ...base, error: outcome.error, tool_call_id: call.id },
      emit: (e) => site.emit(e),
    });
    return;
  }
  site.hooks.fire("PostToolUse", {
    target: name,
    input: { ...base, tool_output: toolOutputText(outcome.result), tool_call_id: call.id },
    emit: (e) => site.emit(e),
  });
}

/** SubagentStart (awaited; the verdict is informational). */
export async function subagentStart(site: HookSite, agentName: string, prompt: string) {
  await site.hooks.trigger("SubagentStart", {
    target: agentName,
    input: { agent_name: agentName, prompt },
    emit: (e) => site.emit(e),
    signal: site.signal,
  });
}

/** SubagentStop (fire-and-forget). */
export function fireSubagentStop(site: HookSite, agentName: string, response: string): void {
  site.hooks.fire("SubagentStop", {
    target: agentName,
    input: { agent_name: agentName, response },
    emit: (e) => site.emit(e),
  });
}

/** Max characters of tool output handed to PostToolUse hooks. */
export const TOOL_OUTPUT_LIMIT = 2000;

/** The text of a tool result for PostToolUse (`output`, else `message`), at most 2000 chars. */
export function toolOutputText(rv: ToolReturnValue): string {
  const out = typeof rv.output === "string"
    ? rv.output
    : rv.output.map((p) => (p.type === "text" ? p.text : "")).join("");
  return (out || rv.message).slice(0, TOOL_OUTPUT_LIMIT);
}

function plainArgs(args: unknown): Record<string, unknown> {
  return args && typeof args === "object" && !Array.isArray(args)
    ? args as Record<string, unknown>
    : {};
}

function errorTypeName(err: unknown): string {
  if (err && typeof err === "object") {
    const ctor = (err as { constructor?: { name?: string } }).constructor?.name;
    if (ctor && ctor !== "Object") return ctor;
    const name = (err as { name?: unknown }).name;
    if (typeof name === "string" && name) return name;
  }
  return "Error";
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
