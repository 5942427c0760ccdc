/**
 * Agent swarms: one prompt template run over a list of items, each item an ordinary foreground
 * subagent (its own instance, context and wire file; approvals through the parent's runtime,
 * so they reach the user; the same permission floor), at most `concurrency` at once. Progress
 * goes to the parent's wire as `SwarmUpdate` events (item deltas plus counts); the items'
 * own events arrive as `SubagentEvent`s of the swarm's tool call.
 *
 * Bounded with 128 items: at most `concurrency` souls, wires and open files exist at a time
 * (and at most 128 across swarms running side by side, e.g. parallel AgentSwarm calls),
 * and each item keeps at most {@link SWARM_OUTPUT_CHARS} characters of its summary (the full
 * text stays in the instance's `output` file).
 *
 * @module
 */
import { SWARM_CONCURRENCY_CEILING } from "../config/schema.ts";
import type {
  AgentRunContext,
  AgentRunError,
  AgentRunRequest,
  ForegroundRunResult,
  SwarmItemResult,
  SwarmRequest,
  SwarmRunResult,
  SwarmSnapshot,
} from "../tooling/subagent_service.ts";
import { MAX_SWARM_ITEMS } from "../tooling/subagent_service.ts";
import {
  event,
  type SwarmCounts,
  type SwarmItemState,
  type WireMessage,
} from "../wire/messages.ts";

/** The placeholder of the prompt template. */
export const SWARM_ITEM_PLACEHOLDER = "{{item}}";
/** Characters of each item's summary kept in memory and returned to the model. */
export const SWARM_OUTPUT_CHARS = 2000;
/** Longest item, in characters. */
export const MAX_ITEM_CHARS = 2000;
/** Finished swarms `/swarm` remembers. */
const RECENT_SWARMS = 5;

/** What a swarm needs from the subagent service. */
export interface SwarmDeps {
  /** Run one item as a foreground subagent. */
  runItem(req: AgentRunRequest, ctx: AgentRunContext): Promise<ForegroundRunResult>;
  /** Whether `name` is a declared subagent type. */
  hasType(name: string): boolean;
  /** Sends a message on the parent's wire. */
  emit(msg: WireMessage): void;
  /** Subagents at once when the call does not say (`[swarm] max_concurrency`). */
  defaultConcurrency: number;
}

interface ItemState {
  index: number;
  item: string;
  state: SwarmItemState;
  agentId: string | null;
  error: string | null;
  output: string;
}

interface SwarmState {
  id: string;
  description: string;
  toolCallId: string;
  concurrency: number;
  done: boolean;
  items: ItemState[];
}

/** Validate a request: the prompts of its items, or an error. */
export function swarmPrompts(req: SwarmRequest): string[] | AgentRunError {
  const err = (message: string) => ({ status: "error" as const, message, brief: "Invalid swarm" });
  if (req.items.length === 0) return err("AgentSwarm needs at least one item.");
  if (req.items.length > MAX_SWARM_ITEMS) {
    return err(
      `AgentSwarm runs at most ${MAX_SWARM_ITEMS} items; got ${req.items.length}. Split the ` +
        "list into several swarms.",
    );
  }
  if (!req.promptTemplate.includes(SWARM_ITEM_PLACEHOLDER)) {
    return err(`prompt_template must contain the ${SWARM_ITEM_PLACEHOLDER} placeholder.`);
  }
  const seen = new Map<string, number>();
  const prompts: string[] = [];
  for (const [i, raw] of req.items.entries()) {
    const item = raw.trim();
    if (!item) return err(`Item ${i + 1} is empty.`);
    if (item.length > MAX_ITEM_CHARS) {
      return err(`Item ${i + 1} is longer than ${MAX_ITEM_CHARS} characters.`);
    }
    const prev = seen.get(item);
    if (prev !== undefined) {
      return err(`Items ${prev} and ${i + 1} are the same ("${item}"); each item must differ.`);
    }
    seen.set(item, i + 1);
    prompts.push(req.promptTemplate.split(SWARM_ITEM_PLACEHOLDER).join(item));
  }
  return prompts;
}

function countsOf(items: readonly ItemState[]): SwarmCounts {
  const c: SwarmCounts = { pending: 0, running: 0, ok: 0, error: 0, cancelled: 0 };
  for (const it of items) c[it.state]++;
  return c;
}

function clip(text: string, agentId: string | null): string {
  if (text.length <= SWARM_OUTPUT_CHARS) return text;
  const where = agentId ? ` (full text: Agent(resume="${agentId}") or its output file)` : "";
  return `${text.slice(0, SWARM_OUTPUT_CHARS)}\n[... summary truncated${where}]`;
}

/** A counting semaphore whose waits end early (false) when their signal aborts. */
class Slots {
  #free: number;
  readonly #waiters: (() => void)[] = [];

  constructor(n: number) {
    this.#free = n;
  }

  /** Take a slot; false when `signal` aborted first. */
  async acquire(signal: AbortSignal): Promise<boolean> {
    while (this.#free === 0) {
      if (signal.aborted) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          const i = this.#waiters.indexOf(wake);
          if (i >= 0) this.#waiters.splice(i, 1);
          resolve();
        };
        this.#waiters.push(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
    if (signal.aborted) return false;
    this.#free--;
    return true;
  }

  /** Give a slot back and wake one waiter. */
  release(): void {
    this.#free++;
    this.#waiters[0]?.();
  }
}

/** The swarms of one root agent. */
export class SwarmRegistry {
  readonly #deps: SwarmDeps;
  readonly #slots = new Slots(SWARM_CONCURRENCY_CEILING);
  #swarms: SwarmState[] = [];

  /** Create the registry. */
  constructor(deps: SwarmDeps) {
    this.#deps = deps;
  }

  /** The running and recent swarms, oldest first. */
  snapshots(): SwarmSnapshot[] {
    return this.#swarms.map((s) => ({
      swarmId: s.id,
      description: s.description,
      concurrency: s.concurrency,
      done: s.done,
      items: s.items.map((it) => ({
        index: it.index,
        item: it.item,
        state: it.state,
        agentId: it.agentId,
        error: it.error,
      })),
    }));
  }

  /** Run a swarm to its end (or until `ctx.signal` is cancelled). */
  async run(req: SwarmRequest, ctx: AgentRunContext): Promise<SwarmRunResult | AgentRunError> {
    const prompts = swarmPrompts(req);
    if (!Array.isArray(prompts)) return prompts;
    if (!this.#deps.hasType(req.subagentType)) {
      return {
        status: "error",
        message: `Unknown subagent type: ${req.subagentType}.`,
        brief: "Unknown subagent type",
      };
    }
    const wanted = req.concurrency ?? this.#deps.defaultConcurrency;
    const concurrency = Math.max(
      1,
      Math.min(wanted, SWARM_CONCURRENCY_CEILING, prompts.length),
    );
    const swarm: SwarmState = {
      id: `swarm-${crypto.randomUUID().slice(0, 8)}`,
      description: req.description.trim() || "swarm",
      toolCallId: ctx.toolCallId,
      concurrency,
      done: false,
      items: req.items.map((item, i) => ({
        index: i + 1,
        item: item.trim(),
        state: "pending",
        agentId: null,
        error: null,
        output: "",
      })),
    };
    this.#remember(swarm);
    this.#report(swarm, null);

    // Cancelling settles every item at once (and reports it while the turn's wire is still
    // open); the running subagents stop on the same signal.
    const onAbort = () => this.#cancelAll(swarm);
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    let next = 0;
    const worker = async () => {
      while (next < prompts.length && !ctx.signal.aborted) {
        // Several swarms at once (parallel AgentSwarm calls) share one ceiling.
        if (!(await this.#slots.acquire(ctx.signal))) return;
        try {
          if (next >= prompts.length || ctx.signal.aborted) return;
          const i = next++;
          await this.#runItem(swarm, swarm.items[i], prompts[i], req, ctx);
        } finally {
          this.#slots.release();
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: concurrency }, worker));
    } finally {
      ctx.signal.removeEventListener("abort", onAbort);
    }
    this.#cancelAll(swarm);
    return {
      swarmId: swarm.id,
      concurrency,
      results: swarm.items.map((it): SwarmItemResult => ({
        index: it.index,
        item: it.item,
        status: it.state === "ok" ? "ok" : it.state === "error" ? "error" : "cancelled",
        agentId: it.agentId,
        output: it.output,
      })),
    };
  }

  async #runItem(
    swarm: SwarmState,
    it: ItemState,
    prompt: string,
    req: SwarmRequest,
    ctx: AgentRunContext,
  ): Promise<void> {
    it.state = "running";
    this.#report(swarm, it);
    let run: ForegroundRunResult;
    try {
      run = await this.#deps.runItem({
        description: `${swarm.description} #${it.index}`,
        prompt,
        subagentType: req.subagentType,
        model: null,
        resume: null,
        timeoutS: null,
      }, {
        toolCallId: ctx.toolCallId,
        signal: ctx.signal,
        onStarted: (agentId) => {
          it.agentId = agentId;
          if (!swarm.done) this.#report(swarm, it);
        },
      });
    } catch (err) {
      run = {
        status: "error",
        message: `Failed to run agent: ${err instanceof Error ? err.message : String(err)}`,
        brief: "Agent failed",
      };
    }
    if (swarm.done) return; // cancelled meanwhile: the item stays cancelled
    switch (run.status) {
      case "completed":
        it.state = "ok";
        it.agentId = run.agentId;
        it.output = clip(run.summary, run.agentId);
        break;
      case "cancelled":
        it.state = "cancelled";
        it.error = "Cancelled while running.";
        it.output = it.error;
        break;
      case "timed_out":
        it.state = "error";
        it.error = `Timed out after ${run.timeoutS}s.`;
        it.output = it.error;
        break;
      case "error":
        it.state = "error";
        it.error = run.message;
        it.output = run.message;
        break;
    }
    this.#report(swarm, it);
  }

  /** End the swarm: items still pending or running are cancelled; reported once. */
  #cancelAll(swarm: SwarmState): void {
    if (swarm.done) return;
    for (const it of swarm.items) {
      if (it.state === "pending") {
        it.state = "cancelled";
        it.error = "Not started: the swarm was cancelled.";
        it.output = it.error;
      } else if (it.state === "running") {
        it.state = "cancelled";
        it.error = "Cancelled while running.";
        it.output = it.error;
      }
    }
    swarm.done = true;
    this.#report(swarm, null);
  }

  #remember(swarm: SwarmState): void {
    this.#swarms.push(swarm);
    const finished = this.#swarms.filter((s) => s.done);
    if (finished.length > RECENT_SWARMS) {
      const drop = new Set(finished.slice(0, finished.length - RECENT_SWARMS));
      this.#swarms = this.#swarms.filter((s) => !drop.has(s));
    }
  }

  #report(swarm: SwarmState, it: ItemState | null): void {
    this.#deps.emit(event("SwarmUpdate", {
      swarm_id: swarm.id,
      parent_tool_call_id: swarm.toolCallId,
      description: swarm.description,
      total: swarm.items.length,
      concurrency: swarm.concurrency,
      counts: countsOf(swarm.items),
      item: it
        ? { index: it.index, item: it.item, state: it.state, agent_id: it.agentId, error: it.error }
        : null,
      done: swarm.done,
    }));
  }
}
