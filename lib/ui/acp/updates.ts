/**
 * The soul's wire messages as ACP `session/update`s (reference §12 "Event mapping"): text and
 * thought chunks, tool calls with kinds, titles (`<Tool>: <key argument>`) and file locations,
 * tool call updates with diffs and text output, the todo list as a `plan`, notifications as
 * text. One {@link TurnMapper} per turn (live or replayed) keeps the streaming tool-call state.
 *
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import { extractText } from "../../llm/message.ts";
import type { DisplayBlock, TodoItem } from "../../wire/display.ts";
import type { EventPayload, ToolReturnValue, WireEvent } from "../../wire/messages.ts";
import { keyArgument } from "../tool_key_argument.ts";

/** ACP tool kinds of the built-in tools (others: `other`). */
const TOOL_KINDS: Record<string, acp.ToolKind> = {
  Shell: "execute",
  ReadFile: "read",
  ReadMediaFile: "read",
  WriteFile: "edit",
  StrReplaceFile: "edit",
  Glob: "search",
  Grep: "search",
  FetchURL: "fetch",
  SearchWeb: "fetch",
  Think: "think",
  EnterPlanMode: "switch_mode",
  ExitPlanMode: "switch_mode",
};

/** Tools whose `path` argument names the file they touch. */
const PATH_TOOLS = new Set(["ReadFile", "ReadMediaFile", "WriteFile", "StrReplaceFile"]);

/** The ACP kind of a tool. */
export function toolKind(name: string): acp.ToolKind {
  return TOOL_KINDS[name] ?? "other";
}

/** `<Tool>: <key argument>`, or the tool name alone. */
export function toolTitle(name: string, args: string): string {
  const arg = keyArgument(name, args);
  return arg ? `${name}: ${arg}` : name;
}

function parseArgs(args: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(args || "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/** Files a tool call touches, absolute (relative paths resolved against `workDir`). */
export function toolLocations(name: string, args: string, workDir: string): acp.ToolCallLocation[] {
  if (!PATH_TOOLS.has(name)) return [];
  const parsed = parseArgs(args);
  const path = parsed?.path;
  if (typeof path !== "string" || !path) return [];
  const abs = path.startsWith("/") ? path : `${workDir.replace(/\/+$/, "")}/${path}`;
  const offset = parsed?.line_offset;
  return [typeof offset === "number" && offset > 0 ? { path: abs, line: offset } : { path: abs }];
}

/** A text content item of a tool call. */
export function textContent(text: string): acp.ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

/** Diff display blocks as ACP diff content. */
export function diffContent(display: readonly DisplayBlock[]): acp.ToolCallContent[] {
  const out: acp.ToolCallContent[] = [];
  for (const b of display) {
    if (b.type !== "diff" || !("path" in b)) continue;
    const d = b as Extract<DisplayBlock, { type: "diff"; path: string }>;
    // a created file has no old text: ACP says null, not "" (an empty old file)
    out.push({
      type: "diff",
      path: d.path,
      oldText: d.old_text === "" ? null : d.old_text,
      newText: d.new_text,
    });
  }
  return out;
}

/** Todo items as a `plan` update. */
export function planUpdate(items: readonly TodoItem[]): acp.SessionUpdate {
  return {
    sessionUpdate: "plan",
    entries: items.map((t) => ({
      content: t.title,
      priority: "medium",
      status: t.status === "done" ? "completed" : t.status,
    })),
  };
}

function todoItems(display: readonly DisplayBlock[]): TodoItem[] | null {
  for (const b of display) {
    if (b.type === "todo" && "items" in b) return (b as { items: TodoItem[] }).items;
  }
  return null;
}

function outputText(rv: ToolReturnValue): string {
  return typeof rv.output === "string" ? rv.output : extractText(rv.output, "\n");
}

interface ToolCallState {
  acpId: string;
  name: string;
  args: string;
}

/** Options of {@link TurnMapper}. */
export interface TurnMapperOptions {
  /** Prefix of this turn's ACP tool call ids (`<turn id>/<tool call id>`). */
  turnId: string;
  /** Work dir, for absolute file locations. */
  workDir: string;
  /** Terminal shown for a tool call (client terminal), if any. */
  terminalOf?: (toolCallId: string) => string | undefined;
}

/** Maps one turn's wire messages to ACP session updates. */
export class TurnMapper {
  readonly #opts: TurnMapperOptions;
  readonly #calls = new Map<string, ToolCallState>();
  #last: ToolCallState | null = null;

  /** Create a mapper for one turn. */
  constructor(opts: TurnMapperOptions) {
    this.#opts = opts;
  }

  /** The ACP id of a tool call of this turn. */
  acpToolCallId(toolCallId: string): string {
    return this.#calls.get(toolCallId)?.acpId ?? `${this.#opts.turnId}/${toolCallId}`;
  }

  /** Whether the tool call was announced in this turn. */
  knows(toolCallId: string): boolean {
    return this.#calls.has(toolCallId);
  }

  /** The announced tool call's title, name and kind (for permission requests). */
  describe(toolCallId: string): { title: string; kind: acp.ToolKind } | null {
    const c = this.#calls.get(toolCallId);
    return c ? { title: toolTitle(c.name, c.args), kind: toolKind(c.name) } : null;
  }

  /** The user's input of a (replayed) turn as user message chunks. */
  userInput(input: EventPayload<"TurnBegin">["user_input"]): acp.SessionUpdate[] {
    if (typeof input === "string") {
      return [{ sessionUpdate: "user_message_chunk", content: { type: "text", text: input } }];
    }
    const out: acp.SessionUpdate[] = [];
    for (const p of input) {
      if (p.type === "text") {
        out.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: p.text } });
      } else if (p.type === "image_url") {
        const m = /^data:([^;,]+);base64,(.*)$/s.exec(p.image_url.url);
        out.push({
          sessionUpdate: "user_message_chunk",
          content: m
            ? { type: "image", mimeType: m[1], data: m[2] }
            : { type: "resource_link", uri: p.image_url.url, name: "image" },
        });
      }
    }
    return out;
  }

  /** The updates for one event (none for events ACP does not show). */
  map(ev: WireEvent): acp.SessionUpdate[] {
    switch (ev.type) {
      case "ContentPart": {
        const p = ev.payload;
        if (p.type === "text") {
          return p.text
            ? [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: p.text } }]
            : [];
        }
        if (p.type === "think") {
          return p.think
            ? [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: p.think } }]
            : [];
        }
        return [{
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: `[${p.type}]` },
        }];
      }
      case "ToolCall": {
        const call = ev.payload;
        const state: ToolCallState = {
          acpId: `${this.#opts.turnId}/${call.id}`,
          name: call.function.name,
          args: call.function.arguments ?? "",
        };
        this.#calls.set(call.id, state);
        this.#last = state;
        // Arguments still streaming are not shown: the content and raw input appear once they
        // are whole JSON (in this update, or in the update that completes them).
        const parsed = parseArgs(state.args);
        return [{
          sessionUpdate: "tool_call",
          toolCallId: state.acpId,
          title: parsed ? toolTitle(state.name, state.args) : state.name,
          kind: toolKind(state.name),
          status: "in_progress",
          content: state.args && parsed ? [textContent(state.args)] : [],
          locations: parsed ? toolLocations(state.name, state.args, this.#opts.workDir) : [],
          ...(parsed ? { rawInput: parsed } : {}),
        }];
      }
      case "ToolCallPart": {
        const state = this.#last;
        const part = ev.payload.arguments_part;
        if (!state || !part) return [];
        state.args += part;
        const parsed = parseArgs(state.args);
        if (!parsed) return [];
        return [{
          sessionUpdate: "tool_call_update",
          toolCallId: state.acpId,
          title: toolTitle(state.name, state.args),
          content: [textContent(state.args)],
          locations: toolLocations(state.name, state.args, this.#opts.workDir),
          rawInput: parsed,
        }];
      }
      case "ToolResult":
        return this.#toolResult(ev.payload.tool_call_id, ev.payload.return_value);
      case "StatusUpdate": {
        const { context_tokens: used, max_context_tokens: size } = ev.payload;
        return used !== null && size !== null && size > 0
          ? [{ sessionUpdate: "usage_update", used, size }]
          : [];
      }
      case "BtwEnd":
        // a side question's answer (`/btw`), shown as agent text; it is not in the context
        return [{
          sessionUpdate: "agent_message_chunk",
          content: {
            type: "text",
            text: ev.payload.response ?? `Side question failed: ${ev.payload.error}`,
          },
        }];
      case "Notification":
        return [{
          sessionUpdate: "agent_message_chunk",
          content: {
            type: "text",
            text: `[Notification] ${ev.payload.title}\n${ev.payload.body}`,
          },
        }];
      default:
        return [];
    }
  }

  #toolResult(toolCallId: string, rv: ToolReturnValue): acp.SessionUpdate[] {
    const acpId = this.acpToolCallId(toolCallId);
    this.#last = null;
    const terminalId = this.#opts.terminalOf?.(toolCallId);
    const content: acp.ToolCallContent[] = diffContent(rv.display);
    if (terminalId) {
      content.push({ type: "terminal", terminalId });
      // The output is in the terminal; only a failure's explanation is added.
      if (rv.is_error && rv.message) content.push(textContent(rv.message));
    } else {
      const text = outputText(rv);
      if (text) content.push(textContent(text));
      else if (rv.message && (rv.is_error || content.length === 0)) {
        content.push(textContent(rv.message));
      }
    }
    const out: acp.SessionUpdate[] = [{
      sessionUpdate: "tool_call_update",
      toolCallId: acpId,
      status: rv.is_error ? "failed" : "completed",
      content,
    }];
    const todos = todoItems(rv.display);
    if (todos) out.push(planUpdate(todos));
    return out;
  }
}
