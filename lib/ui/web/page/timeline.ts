/**
 * The wire timeline of `kimi vis`: records grouped into turns and steps with their durations,
 * tool calls and token usage. Pure data (tested without a browser).
 *
 * @module
 */

/** One wire record as `/wire` returns it. */
export interface VisEvent {
  /** Position in the file. */
  index: number;
  /** Unix seconds. */
  timestamp: number;
  /** Message type. */
  type: string;
  /** Payload. */
  payload: Record<string, unknown>;
}

/** A step of the timeline. */
export interface VisStep {
  /** Step number. */
  n: number;
  /** Start time. */
  start: number;
  /** End time (start of the next step or the turn end). */
  end: number;
  /** Events of the step. */
  events: VisEvent[];
  /** Tool calls: name and whether its result was an error (null while unknown). */
  tools: { id: string; name: string; error: boolean | null }[];
  /** Tokens: input (all kinds) and output, when a StatusUpdate reported them. */
  tokens: { input: number; output: number } | null;
}

/** A turn of the timeline. */
export interface VisTurn {
  /** 1-based number. */
  n: number;
  /** User input text. */
  input: string;
  /** Start time. */
  start: number;
  /** End time. */
  end: number;
  /** Steps. */
  steps: VisStep[];
  /** Records of the turn outside any step (before its first step or after its end). */
  loose: VisEvent[];
}

function text(input: unknown): string {
  if (typeof input === "string") return input;
  if (Array.isArray(input)) {
    return input.map((
      p,
    ) => (p && typeof p === "object" && "text" in p ? String(p.text) : "[media]"))
      .join(" ");
  }
  return "";
}

/** Group wire records into turns and steps (pure; tested). */
export function buildTimeline(events: VisEvent[]): VisTurn[] {
  const turns: VisTurn[] = [];
  let turn: VisTurn | null = null;
  let step: VisStep | null = null;
  const close = (t: number) => {
    if (step) step.end = t;
    step = null;
  };
  for (const e of events) {
    if (e.type === "metadata") continue;
    // A record's payload may be anything (the file is input): read it as an object or nothing.
    const p: Record<string, unknown> = e.payload && typeof e.payload === "object" ? e.payload : {};
    if (e.type === "TurnBegin") {
      close(e.timestamp);
      if (turn && !turn.end) turn.end = e.timestamp;
      turn = {
        n: turns.length + 1,
        input: text(p.user_input),
        start: e.timestamp,
        end: 0,
        steps: [],
        loose: [],
      };
      turns.push(turn);
      continue;
    }
    if (!turn) {
      turn = { n: turns.length + 1, input: "", start: e.timestamp, end: 0, steps: [], loose: [] };
      turns.push(turn);
    }
    if (e.type === "StepBegin") {
      close(e.timestamp);
      step = {
        n: typeof p.n === "number" ? p.n : turn.steps.length + 1,
        start: e.timestamp,
        end: e.timestamp,
        events: [],
        tools: [],
        tokens: null,
      };
      turn.steps.push(step);
      continue;
    }
    if (e.type === "TurnEnd") {
      close(e.timestamp);
      turn.end = e.timestamp;
      continue;
    }
    const s = step as VisStep | null;
    if (!s) {
      turn.loose.push(e);
      continue;
    }
    s.events.push(e);
    s.end = Math.max(s.end, e.timestamp);
    if (e.type === "ToolCall") {
      const fn = (p.function ?? {}) as { name?: string };
      s.tools.push({ id: String(p.id ?? ""), name: String(fn.name ?? "?"), error: null });
    } else if (e.type === "ToolResult") {
      const call = s.tools.find((t) => t.id === p.tool_call_id);
      const rv = (p.return_value ?? {}) as { is_error?: boolean };
      if (call) call.error = rv.is_error === true;
    } else if (e.type === "StatusUpdate" && p.token_usage) {
      const u = p.token_usage as Record<string, number>;
      s.tokens = {
        input: (u.input_other ?? 0) + (u.input_cache_read ?? 0) + (u.input_cache_creation ?? 0),
        output: u.output ?? 0,
      };
    }
  }
  for (const t of turns) {
    if (!t.end) t.end = t.steps.at(-1)?.end ?? t.start;
  }
  return turns;
}
