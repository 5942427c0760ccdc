/**
 * The toolset: tools by name, their JSON Schemas for the model, and dispatch of tool calls
 * with the reference's error messages (§6.10), same-step deduplication and cross-step repeat
 * detection. Every call runs through the one pipeline (`tool_pipeline.ts`) after taking its
 * turn among the calls of its step (`tool_scheduler.ts`).
 *
 * @module
 */
import type { ToolCall } from "../llm/message.ts";
import type { ToolSpec } from "../llm/provider.ts";
import { paramJsonSchema } from "../tooling/param_json_schema.ts";
import { toolError } from "../tooling/result.ts";
import type { PermissionScope } from "../tooling/scope.ts";
import type { Tool, ToolCallContext, ToolReturnValue } from "../tooling/tool.ts";
import {
  type AfterToolCall,
  type BeforeToolCall,
  type CallTurn,
  type FileHistory,
  runToolPipeline,
} from "./tool_pipeline.ts";
import { ToolScheduler } from "./tool_scheduler.ts";

export type { AfterToolCall, BeforeToolCall, FileHistory };

/**
 * Marks a result made from an exception inside a tool: a symbol-keyed, non-enumerable field of
 * the result itself (never serialized), not a process-wide table.
 */
const RUNTIME_ERROR: unique symbol = Symbol("kimi.toolRuntimeError");

function markRuntimeError(rv: ToolReturnValue): ToolReturnValue {
  Object.defineProperty(rv, RUNTIME_ERROR, { value: true, enumerable: false });
  return rv;
}

/** Whether a result came from an exception inside a tool (it gets an extra note for the model). */
export function isToolRuntimeError(rv: ToolReturnValue): boolean {
  return (rv as ToolReturnValue & { [RUNTIME_ERROR]?: true })[RUNTIME_ERROR] === true;
}

/** Sort object keys recursively: the canonical form used to compare tool calls. */
export function canonicalJson(value: unknown): string {
  const sortDeep = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortDeep);
    if (v && typeof v === "object") {
      return Object.fromEntries(
        Object.keys(v as object).sort().map((
          k,
        ) => [k, sortDeep((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sortDeep(value));
}

/** JSON Schema of a tool's parameters as the model sees it. */
export function toolJsonSchema(tool: Tool): Record<string, unknown> {
  return tool.jsonSchema ?? paramJsonSchema(tool.parameters);
}

const REMINDER_1 =
  "\n\n<system-reminder>\nYou are repeating the exact same tool call with identical " +
  "parameters. The result will not change. Use the result you already have, or change your " +
  "approach.\n</system-reminder>";
const reminder2 = (name: string, times: number, args: string) =>
  `\n\n<system-reminder>\nYou have called \`${name}\` ${times} times in a row with identical ` +
  `arguments: ${args}\nThis is a loop. Stop repeating this call; try a different tool, different ` +
  `arguments, or a different plan.\n</system-reminder>`;
const REMINDER_3 = "\n\n<system-reminder>\nYou are stuck in a loop of identical tool calls. Stop " +
  "calling tools now and reply to the user with a text summary of what you found, what you " +
  "tried and what is blocking you.\n</system-reminder>";

/** Streak at which the turn is stopped after the step. */
export const FORCE_STOP_STREAK = 12;

/** Options of {@link Toolset}. */
export interface ToolsetOptions {
  /** The permission scope every declared access is checked against (absent: not checked). */
  scope?: PermissionScope;
  /** Undo snapshots of the files calls change (absent: not tracked). */
  fileHistory?: FileHistory | null;
  /** Most tool calls of one step running at once (default 16). */
  maxParallelCalls?: number;
}

/**
 * Tools of one agent. Every call runs through one pipeline ({@link runToolPipeline}) and takes
 * its turn among the calls of its step ({@link ToolScheduler}).
 */
export class Toolset {
  readonly #tools = new Map<string, Tool>();
  readonly #hidden = new Set<string>();
  /** Tools this run's permissions leave out, with why (said when the model calls one). */
  readonly #unavailable = new Map<string, string>();
  #specCache: ToolSpec[] | null = null;
  #stepCalls = new Map<string, Promise<ToolReturnValue>>();
  #seenKeys = new Set<string>();
  #stepKeys = new Set<string>();
  #lastKey: string | null = null;
  #streak = 0;
  #forceStop = false;
  /** Optional hook consulted before every call (PreToolUse). */
  beforeCall: BeforeToolCall | null = null;
  /** Optional hook told after every executed call (PostToolUse / PostToolUseFailure). */
  afterCall: AfterToolCall | null = null;
  /** Scope the declared accesses are checked against. */
  readonly scope: PermissionScope | undefined;
  /** Undo snapshots of changed files (shared with subagents' toolsets). */
  readonly fileHistory: FileHistory | null;
  readonly #scheduler: ToolScheduler;

  /** Create an empty toolset. */
  constructor(opts: ToolsetOptions = {}) {
    this.scope = opts.scope;
    this.fileHistory = opts.fileHistory ?? null;
    this.#scheduler = new ToolScheduler(opts.maxParallelCalls);
  }

  /** Most tool calls of one step running at once. */
  get maxParallelCalls(): number {
    return this.#scheduler.limit;
  }

  /** Change the bound on parallel calls (config `loop_control.max_parallel_tool_calls`). */
  setMaxParallelCalls(limit: number): void {
    this.#scheduler.setLimit(limit);
  }

  /** Add (or replace) a tool. */
  add(tool: Tool): void {
    this.#tools.set(tool.name, tool);
    this.#specCache = null;
  }

  /** Remove a tool. */
  remove(name: string): void {
    this.#tools.delete(name);
    this.#specCache = null;
  }

  /**
   * Record that `name` is left out of this run and why (e.g. `WriteFile is not available in
   * the review profile: …`): a call to it gets that message instead of "not found".
   */
  setUnavailable(name: string, message: string): void {
    this.#unavailable.set(name, message);
  }

  /** Hide a tool from the model's list (it stays callable by name). */
  setHidden(name: string, hidden: boolean): void {
    if (hidden) this.#hidden.add(name);
    else this.#hidden.delete(name);
    this.#specCache = null;
  }

  /** A tool by name. */
  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** Names of all tools, in registration order. */
  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** Tool specs offered to the model (hidden tools left out). */
  specs(): ToolSpec[] {
    if (this.#specCache) return this.#specCache;
    this.#specCache = [...this.#tools.values()]
      .filter((t) => !this.#hidden.has(t.name))
      .map((t) => ({ name: t.name, description: t.description, parameters: toolJsonSchema(t) }));
    return this.#specCache;
  }

  /** Whether the repeat detector asked to stop the turn. */
  get forceStopRequested(): boolean {
    return this.#forceStop;
  }

  /** Forget repeat history (new turn, D-Mail revert, or a step without calls). */
  resetRepeatTracking(): void {
    this.#seenKeys.clear();
    this.#lastKey = null;
    this.#streak = 0;
    this.#forceStop = false;
  }

  /** Start a step: same-step deduplication starts afresh. */
  beginStep(): void {
    this.#scheduler.beginStep();
    this.#stepCalls.clear();
    this.#stepKeys.clear();
  }

  /** End a step: its call keys count as seen for later steps. */
  endStep(hadCalls: boolean): void {
    if (!hadCalls) {
      this.resetRepeatTracking();
      return;
    }
    for (const k of this.#stepKeys) this.#seenKeys.add(k);
  }

  /** Run one tool call to its result. Never throws. */
  call(call: ToolCall, ctx: ToolCallContext): Promise<ToolReturnValue> {
    const name = call.function.name;
    const rawArgs = call.function.arguments;
    let args: unknown = {};
    let parseError: string | null = null;
    if (rawArgs !== null && rawArgs.trim() !== "") {
      try {
        args = JSON.parse(rawArgs);
      } catch (err) {
        parseError = (err as Error).message;
      }
    }
    if (args === null) args = {};
    const key = `${name}\u0000${parseError === null ? canonicalJson(args) : rawArgs}`;
    const dup = this.#stepCalls.get(key);
    if (dup) return dup;

    let reminder = "";
    if (this.#seenKeys.has(key) || this.#lastKey === key) {
      this.#streak = this.#lastKey === key ? this.#streak + 1 : 2;
    } else {
      this.#streak = 1;
    }
    this.#lastKey = key;
    if (this.#streak >= 8) reminder = REMINDER_3;
    else if (this.#streak >= 5) reminder = reminder2(name, this.#streak, rawArgs ?? "{}");
    else if (this.#streak >= 3) reminder = REMINDER_1;
    if (this.#streak >= FORCE_STOP_STREAK) this.#forceStop = true;
    this.#stepKeys.add(key);

    const run = this.#run(call, args, parseError, ctx, this.#scheduler.enter()).then((rv) =>
      reminder ? appendReminder(rv, reminder) : rv
    );
    this.#stepCalls.set(key, run);
    return run;
  }

  async #run(
    call: ToolCall,
    args: unknown,
    parseError: string | null,
    ctx: ToolCallContext,
    turn: CallTurn,
  ): Promise<ToolReturnValue> {
    const name = call.function.name;
    const tool = this.#tools.get(name);
    if (!tool || parseError !== null) {
      turn.skip();
      if (!tool) {
        const unavailable = this.#unavailable.get(name);
        if (unavailable !== undefined) {
          return toolError({ message: unavailable, brief: `${name} is not available` });
        }
        return toolError({
          message: `Tool \`${name}\` not found`,
          brief: `Tool \`${name}\` not found`,
        });
      }
      return toolError({
        message: `Error parsing JSON arguments: ${parseError}`,
        brief: "Invalid arguments",
      });
    }
    try {
      return await runToolPipeline(tool, call, args, ctx, {
        scope: this.scope,
        fileHistory: this.fileHistory,
        beforeCall: this.beforeCall,
        afterCall: this.afterCall,
        turn,
      });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      const error = (err as Error)?.message ?? String(err);
      const rv = toolError({
        message: `Error running tool: ${error}`,
        brief: "Tool runtime error",
      });
      return markRuntimeError(rv);
    }
  }
}

function appendReminder(rv: ToolReturnValue, reminder: string): ToolReturnValue {
  const output = typeof rv.output === "string"
    ? rv.output + reminder
    : [...rv.output, { type: "text" as const, text: reminder }];
  const out = { ...rv, output };
  return isToolRuntimeError(rv) ? markRuntimeError(out) : out;
}
