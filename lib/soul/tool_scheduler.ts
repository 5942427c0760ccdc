/**
 * Scheduling of the tool calls of one step by what they declare to touch: calls that touch
 * the same path (a write conflicts with any read or write of that path) run one after the
 * other in call order; other calls run in parallel, at most {@link ToolScheduler.limit} at
 * once (so one response with hundreds of Shell calls does not start hundreds of processes).
 *
 * @module
 */
import type { CallTurn, ReleaseTurn } from "./tool_pipeline.ts";
import type { ToolAccess } from "../tooling/tool.ts";

/**
 * Most tool calls of one step running at once by default (a reply with hundreds of Shell calls
 * starts 16 processes, not hundreds).
 */
export const DEFAULT_PARALLEL_TOOL_CALLS = 16;

interface Entry {
  /** Settles with the call's accesses once it has resolved them (none when it skipped). */
  readonly accesses: Promise<readonly ToolAccess[]>;
  /** Settles once the call has released or skipped its turn. */
  readonly done: Promise<void>;
}

/** Whether two calls may not run at the same time. */
export function accessesConflict(a: readonly ToolAccess[], b: readonly ToolAccess[]): boolean {
  for (const x of a) {
    if (x.kind !== "read" && x.kind !== "write") continue;
    for (const y of b) {
      if (y.kind !== "read" && y.kind !== "write") continue;
      if (x.path === y.path && (x.kind === "write" || y.kind === "write")) return true;
    }
  }
  return false;
}

/** The turns of one toolset's calls (one per agent; a step's calls enter in call order). */
export class ToolScheduler {
  #limit: number;
  #entries: Entry[] = [];
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  /** Create a scheduler running at most `limit` calls at once (default 16). */
  constructor(limit: number = DEFAULT_PARALLEL_TOOL_CALLS) {
    this.#limit = Math.max(1, Math.floor(limit));
  }

  /** Most calls running at once. */
  get limit(): number {
    return this.#limit;
  }

  /** Change the bound (applies to calls that start from now on). */
  setLimit(limit: number): void {
    this.#limit = Math.max(1, Math.floor(limit));
    while (this.#running < this.#limit && this.#waiting.length > 0) {
      this.#running++;
      this.#waiting.shift()!();
    }
  }

  /** A new step: its calls only wait for each other. */
  beginStep(): void {
    this.#entries = [];
  }

  /** Take the next turn (call it when the call arrives, so turns follow call order). */
  enter(): CallTurn {
    const earlier = [...this.#entries];
    let setAccesses!: (a: readonly ToolAccess[]) => void;
    let setDone!: () => void;
    const entry: Entry = {
      accesses: new Promise((r) => (setAccesses = r)),
      done: new Promise((r) => (setDone = r)),
    };
    this.#entries.push(entry);
    let used = false;
    return {
      acquire: async (accesses): Promise<ReleaseTurn> => {
        if (used) throw new Error("a call's turn is taken once");
        used = true;
        setAccesses(accesses);
        // A call that touches no path waits for nothing but a slot.
        const touchesPaths = accesses.some((a) => a.kind === "read" || a.kind === "write");
        for (const e of touchesPaths ? earlier : []) {
          if (accessesConflict(await e.accesses, accesses)) await e.done;
        }
        await this.#slot();
        let released = false;
        return () => {
          if (released) return;
          released = true;
          this.#free();
          setDone();
        };
      },
      skip: () => {
        if (used) return;
        used = true;
        setAccesses([]);
        setDone();
      },
    };
  }

  #slot(): Promise<void> {
    if (this.#running < this.#limit) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #free(): void {
    if (this.#waiting.length > 0 && this.#running <= this.#limit) this.#waiting.shift()!();
    else this.#running--;
  }
}
