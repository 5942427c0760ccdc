/**
 * The hook engine (reference §2.2, §4.3, §4.9, §4.10): finds the hooks matching an event —
 * configured shell commands and the wire client's subscriptions — runs them in parallel and
 * folds their verdicts into one (block when any blocks). Every run that matched something is
 * framed by `HookTriggered` / `HookResolved` events. Hooks fail open: errors and timeouts allow.
 *
 * @module
 */
import { type HookDef, type HookEvent, HookEventSchema } from "../config/schema.ts";
import { log } from "../log.ts";
import type { CommandWrapper } from "../process/command_wrapper.ts";
import { PendingRequest, type WireEvent } from "../wire/messages.ts";
import { event as wireEvent } from "../wire/messages.ts";
import { allowResult, type HookAction, type HookResult, runHookCommand } from "./runner.ts";

/** The 13 events a hook can subscribe to (initialize `hooks.supported_events`, in order). */
export const HOOK_EVENTS: readonly HookEvent[] = HookEventSchema.options.filter((e) =>
  e !== "MessageDisplay"
);

/** Whether a string names one of the supported hook events. */
export function isHookEvent(name: string): name is HookEvent {
  return (HOOK_EVENTS as readonly string[]).includes(name);
}

/** A client-side hook subscription from `initialize.hooks`. */
export interface WireHookSubscription {
  /** Client-chosen id, echoed as `subscription_id` in each HookRequest. */
  id: string;
  /** Event name. */
  event: HookEvent;
  /** Regex searched in the event's target ("" matches everything). */
  matcher: string;
  /** Seconds to wait for the client's answer before allowing. */
  timeout: number;
}

/**
 * Sends a HookRequest to the wire client. The engine waits on `request.result` (with the
 * subscription's timeout) and resolves the request itself with "allow" when time runs out.
 */
export type WireHookSender = (request: PendingRequest<"HookRequest">) => void;

/** Options of {@link HookEngine}. */
export interface HookEngineOptions {
  /** `[[hooks]]` from config. */
  hooks: readonly HookDef[];
  /** Work dir: hook commands run here and it is the `cwd` field of every input. */
  cwd: string;
  /** Session id (the `session_id` field of every input). */
  sessionId: string;
  /** Environment of hook commands (the user's variables without the agent's secrets). */
  childEnv: () => Record<string, string>;
  /**
   * How hook commands are spawned, read per run (the session's process isolation: a pid
   * namespace of their own). Default: as given.
   */
  spawn?: () => CommandWrapper;
  /** Where HookTriggered/HookResolved go when a trigger names no emitter (e.g. the soul). */
  emit?: (event: WireEvent) => void;
}

/** Options of one {@link HookEngine.trigger}. */
export interface TriggerOptions {
  /** What the matchers are searched in (tool name, prompt text, session source, ...). */
  target?: string;
  /** Event-specific input fields (the base fields are added by the engine). */
  input?: Record<string, unknown>;
  /** Emitter for HookTriggered/HookResolved of this run (default: the engine's). */
  emit?: (event: WireEvent) => void;
  /** Aborts running hook commands (the trigger then rejects). */
  signal?: AbortSignal;
  /** Caps every hook's timeout at this many seconds (e.g. SessionEnd: 5). */
  maxTimeoutS?: number;
}

/** The last run of one hook, for `/hooks`. */
export interface HookLastRun {
  /** When it finished (ms since epoch). */
  at: number;
  /** Its verdict. */
  action: HookAction;
  /** Its reason ("" when none). */
  reason: string;
  /** Exit code (0 for wire hooks). */
  exitCode: number;
  /** Whether it ran out of time. */
  timedOut: boolean;
  /** How long the run of its event took, in ms. */
  durationMs: number;
}

/** One configured hook or wire subscription, as `/hooks` lists it. */
export interface HookListing {
  /** `config` (a `[[hooks]]` command) or `wire` (a client subscription). */
  source: "config" | "wire";
  /** Event name. */
  event: HookEvent;
  /** Matcher regex ("" matches everything). */
  matcher: string;
  /** The command (config) or the subscription id (wire). */
  target: string;
  /** Timeout in seconds. */
  timeout: number;
  /** The last run, or null when it has not run in this process. */
  last: HookLastRun | null;
}

/** The folded decision of every hook that matched. */
export interface HookVerdict {
  /** "block" when any hook blocked. */
  action: HookAction;
  /** Reason of the first blocking hook ("" when allowed). */
  reason: string;
  /** Every hook's own result (config hooks first, then wire subscriptions). */
  results: HookResult[];
}

const ALLOW: HookVerdict = Object.freeze({
  action: "allow",
  reason: "",
  results: [],
}) as HookVerdict;

/**
 * Compile a hook matcher (Python `re` syntax, searched anywhere in the target). A leading
 * `(?i)` becomes the ignore-case flag. Returns null for an invalid pattern.
 */
export function compileMatcher(pattern: string): RegExp | null {
  let source = pattern;
  let flags = "u";
  const inline = source.match(/^\(\?([aiLmsux]+)\)/);
  if (inline) {
    source = source.slice(inline[0].length);
    if (inline[1].includes("i")) flags += "i";
    if (inline[1].includes("m")) flags += "m";
    if (inline[1].includes("s")) flags += "s";
  }
  try {
    return new RegExp(source, flags);
  } catch {
    try {
      return new RegExp(source, flags.replace("u", ""));
    } catch {
      return null;
    }
  }
}

/** Whether a matcher selects a target ("" selects everything; invalid patterns nothing). */
export function matcherMatches(pattern: string, target: string): boolean {
  if (!pattern) return true;
  const re = compileMatcher(pattern);
  if (!re) {
    log("WARNING", "hooks", `invalid regex in hook matcher: ${pattern}`);
    return false;
  }
  return re.test(target);
}

/** A new hook request id (12 hex digits, as the reference). */
function hookRequestId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

/** Configured and client-side hooks of one session. */
export class HookEngine {
  readonly #hooks: HookDef[];
  readonly #subs: WireHookSubscription[] = [];
  readonly #cwd: string;
  readonly #sessionId: string;
  readonly #childEnv: () => Record<string, string>;
  readonly #spawn: (() => CommandWrapper) | undefined;
  #emit: ((event: WireEvent) => void) | null;
  #sendWire: WireHookSender | null = null;
  readonly #last = new Map<object, HookLastRun>();
  /** Hooks started by {@link fire} and not finished yet. */
  readonly #inflight = new Set<Promise<unknown>>();

  /** Create an engine. */
  constructor(opts: HookEngineOptions) {
    this.#hooks = opts.hooks.filter((h) => isHookEvent(h.event));
    this.#cwd = opts.cwd;
    this.#sessionId = opts.sessionId;
    this.#childEnv = opts.childEnv;
    this.#spawn = opts.spawn;
    this.#emit = opts.emit ?? null;
  }

  /** Set the default emitter of HookTriggered/HookResolved (null: not emitted). */
  setEmitter(emit: ((event: WireEvent) => void) | null): void {
    this.#emit = emit;
  }

  /** Install (or remove) the wire client's HookRequest sender. */
  setWireSender(sender: WireHookSender | null): void {
    this.#sendWire = sender;
  }

  /** Register client-side subscriptions (`initialize.hooks`); unknown events are ignored. */
  addWireSubscriptions(
    subs: readonly { id: string; event: string; matcher?: string; timeout?: number }[],
  ): void {
    for (const s of subs) {
      if (!isHookEvent(s.event)) continue;
      const timeout = typeof s.timeout === "number" && s.timeout > 0 ? s.timeout : 30;
      this.#subs.push({ id: s.id, event: s.event, matcher: s.matcher ?? "", timeout });
    }
  }

  /** Number of hooks (config + wire) per event, for `initialize.hooks.configured`. */
  summary(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const h of this.#hooks) counts[h.event] = (counts[h.event] ?? 0) + 1;
    for (const s of this.#subs) counts[s.event] = (counts[s.event] ?? 0) + 1;
    return counts;
  }

  /** Every configured hook and wire subscription with its last result (for `/hooks`). */
  list(): HookListing[] {
    return [
      ...this.#hooks.map((h): HookListing => ({
        source: "config",
        event: h.event,
        matcher: h.matcher,
        target: h.command,
        timeout: h.timeout,
        last: this.#last.get(h) ?? null,
      })),
      ...this.#subs.map((s): HookListing => ({
        source: "wire",
        event: s.event,
        matcher: s.matcher,
        target: s.id,
        timeout: s.timeout,
        last: this.#last.get(s) ?? null,
      })),
    ];
  }

  /** Whether any hook (config or wire) listens to an event. */
  hasHooksFor(event: HookEvent): boolean {
    return this.#hooks.some((h) => h.event === event) || this.#subs.some((s) => s.event === event);
  }

  /** The JSON description a hook receives: base fields, then the event's own fields. */
  inputFor(event: HookEvent, fields: Record<string, unknown> = {}): Record<string, unknown> {
    return { hook_event_name: event, session_id: this.#sessionId, cwd: this.#cwd, ...fields };
  }

  /**
   * Run every hook matching `event` / `target` in parallel and fold the verdicts. Resolves
   * "allow" when nothing matched or the engine failed; rejects only when `signal` aborts.
   */
  async trigger(event: HookEvent, opts: TriggerOptions = {}): Promise<HookVerdict> {
    const target = opts.target ?? "";
    const seen = new Set<string>();
    const commands = this.#hooks.filter((h) => {
      if (h.event !== event || !matcherMatches(h.matcher, target)) return false;
      if (seen.has(h.command)) return false;
      seen.add(h.command);
      return true;
    });
    const subs = this.#subs.filter((s) => s.event === event && matcherMatches(s.matcher, target));
    const total = commands.length + subs.length;
    if (total === 0) return ALLOW;

    const emit = opts.emit ?? this.#emit ?? (() => {});
    const input = this.inputFor(event, opts.input);
    const cap = (t: number) => (opts.maxTimeoutS ? Math.min(t, opts.maxTimeoutS) : t);
    try {
      emit(wireEvent("HookTriggered", { event, target, hook_count: total }));
    } catch {
      // emitting is best effort
    }
    const t0 = performance.now();
    let results: HookResult[];
    try {
      let env: Record<string, string> | null = null;
      const childEnv = () => (env ??= this.#childEnv());
      results = await Promise.all([
        ...commands.map((h) =>
          runHookCommand(h.command, input, {
            timeoutS: cap(h.timeout),
            cwd: this.#cwd,
            env: childEnv(),
            signal: opts.signal,
            wrapper: this.#spawn?.(),
          })
        ),
        ...subs.map((s) =>
          this.#askClient(s, { event, target, input, timeoutS: cap(s.timeout) }, opts.signal)
        ),
      ]);
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      log(
        "WARNING",
        "hooks",
        `hook engine error for ${event}, allowing: ${(err as Error).message}`,
      );
      results = [];
    }
    const durationMs = Math.floor(performance.now() - t0);
    [...commands, ...subs].forEach((hook, i) => {
      const r = results[i];
      if (!r) return;
      this.#last.set(hook, {
        at: Date.now(),
        action: r.action,
        reason: r.reason,
        exitCode: r.exitCode,
        timedOut: r.timedOut,
        durationMs,
      });
    });
    const blocked = results.find((r) => r.action === "block");
    const verdict: HookVerdict = {
      action: blocked ? "block" : "allow",
      reason: blocked?.reason ?? "",
      results,
    };
    try {
      emit(wireEvent("HookResolved", {
        event,
        target,
        action: verdict.action,
        reason: verdict.reason,
        duration_ms: Math.floor(performance.now() - t0),
      }));
    } catch {
      // emitting is best effort
    }
    return verdict;
  }

  /**
   * Trigger without waiting (PostToolUse, StopFailure, PostCompact, Notification, ...). Never
   * throws. {@link settle} waits for the hooks started this way.
   */
  fire(event: HookEvent, opts: TriggerOptions = {}): void {
    if (!this.hasHooksFor(event)) return;
    const run = this.trigger(event, opts).catch(() => {});
    this.#inflight.add(run);
    void run.finally(() => this.#inflight.delete(run));
  }

  /**
   * Wait until the hooks started by {@link fire} have finished (each is bounded by its own
   * timeout), so a run that ends does not cut them off.
   */
  async settle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.all([...this.#inflight]);
  }

  async #askClient(
    sub: WireHookSubscription,
    call: { event: HookEvent; target: string; input: Record<string, unknown>; timeoutS: number },
    signal?: AbortSignal,
  ): Promise<HookResult> {
    const send = this.#sendWire;
    if (!send) return allowResult();
    const id = hookRequestId();
    const request = new PendingRequest("HookRequest", {
      id,
      subscription_id: sub.id,
      event: call.event,
      target: call.target,
      input_data: call.input,
    });
    const allow = { request_id: id, action: "allow" as const, reason: "" };
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      send(request);
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), call.timeoutS * 1000);
      });
      const aborted = new Promise<"aborted">((resolve) => {
        if (!signal) return;
        if (signal.aborted) resolve("aborted");
        onAbort = () => resolve("aborted");
        signal.addEventListener("abort", onAbort, { once: true });
      });
      const answer = await Promise.race([request.result, timedOut, aborted]);
      if (answer === "aborted") {
        request.resolve(allow);
        throw signal?.reason ?? new Error("hook aborted");
      }
      if (answer === "timeout") {
        log("WARNING", "hooks", `wire hook timed out: ${call.event} ${call.target}`);
        request.resolve(allow);
        return allowResult({ timedOut: true });
      }
      return answer.action === "block"
        ? { ...allowResult(), action: "block", reason: answer.reason ?? "" }
        : allowResult();
    } catch (err) {
      if (signal?.aborted) throw err;
      log("WARNING", "hooks", `wire hook failed: ${call.event}: ${(err as Error).message}`);
      request.resolve(allow);
      return allowResult();
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }
}
