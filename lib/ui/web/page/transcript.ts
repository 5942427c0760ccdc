/**
 * The chat's view model: folds wire-protocol messages (the replayed, merged records of
 * `wire.jsonl` and the live, raw chunks of a running turn alike) into turns of blocks the page
 * renders. Pure data, no DOM, so it is tested without a browser.
 *
 * Replay after a reconnect starts from an empty transcript, so history is never counted twice.
 *
 * @module
 */

/** One display block of a tool result or approval request (reference §4.10 DisplayBlocks). */
export type DisplayBlock =
  | { type: "brief"; text: string }
  | {
    type: "diff";
    path: string;
    old_text: string;
    new_text: string;
    old_start?: number;
    new_start?: number;
    is_summary?: boolean;
  }
  | { type: "todo"; items: { title: string; status: string }[] }
  | { type: "shell"; language: string; command: string }
  | { type: "background_task"; task_id: string; kind: string; status: string; description: string }
  | { type: string; [key: string]: unknown };

/** A tool call with its streamed arguments and, once known, its result. */
export interface ToolBlock {
  /** Block kind. */
  kind: "tool";
  /** Tool call id. */
  id: string;
  /** Tool name. */
  name: string;
  /** Arguments as streamed so far (JSON text). */
  args: string;
  /** The result once the tool finished. */
  result: ToolResultView | null;
  /** Subagent blocks nested under an Agent call. */
  subagent: SubagentView | null;
  /** Progress of an AgentSwarm call. */
  swarm?: SwarmView;
}

/** Progress of an agent swarm (`SwarmUpdate`). */
export interface SwarmView {
  /** What the swarm does. */
  description: string;
  /** Items in all. */
  total: number;
  /** Items by state. */
  counts: { pending: number; running: number; ok: number; error: number; cancelled: number };
  /** Whether the swarm finished. */
  done: boolean;
}

/** The session's goal (`GoalUpdate`). */
export interface GoalView {
  /** What the goal is. */
  objective: string;
  /** `active`, `paused`, `blocked` or `budget_exhausted`. */
  status: string;
  /** Why it is not active. */
  reason: string | null;
  /** Turns used, and the limit if any. */
  turns: [number, number | null];
  /** Tokens used, and the limit if any. */
  tokens: [number, number | null];
}

/** What a finished tool returned. */
export interface ToolResultView {
  /** Whether the tool failed. */
  isError: boolean;
  /** Output text (the model-facing output when a string). */
  output: string;
  /** Message for the user. */
  message: string;
  /** Display blocks. */
  display: DisplayBlock[];
}

/** Steps of a subagent run under an Agent tool call. */
export interface SubagentView {
  /** Agent id. */
  agentId: string;
  /** Subagent type label. */
  type: string;
  /** Its own blocks. */
  blocks: Block[];
}

/** A run of assistant text, thinking, media or a notice. */
export type Block =
  | { kind: "text"; text: string }
  | { kind: "think"; text: string }
  | { kind: "media"; media: "image" | "audio" | "video"; url: string }
  | { kind: "notice"; text: string; tone: "info" | "warn" | "error" }
  | { kind: "compaction"; done: boolean }
  | { kind: "approval"; requestId: string; sender: string; description: string; response: string }
  | ToolBlock;

/** One user turn and what followed it. */
export interface Turn {
  /** Index of the turn (0-based, as forks count them). */
  index: number;
  /** What the user sent (text of the parts). */
  userText: string;
  /** Images the user sent (data URLs or URLs). */
  userImages: string[];
  /** Names of files uploaded with the prompt. */
  userFiles: string[];
  /** Assistant-side blocks. */
  blocks: Block[];
  /** Whether `TurnEnd` arrived. */
  ended: boolean;
  /** Steps of the agent loop in the turn (none for a slash command that only answers). */
  steps?: number;
}

/** An approval the agent waits for. */
export interface PendingApproval {
  /** JSON-RPC id of the request (= payload id). */
  id: string;
  /** Tool call it belongs to. */
  toolCallId: string;
  /** Tool name. */
  sender: string;
  /** Action key (the rule "approve for session" would save). */
  action: string;
  /** Human description. */
  description: string;
  /** Subagent type when a subagent asks. */
  subagentType: string | null;
  /** Display blocks (command, diff). */
  display: DisplayBlock[];
}

/** A question of the AskUserQuestion tool. */
export interface QuestionItem {
  /** Question text (the answer key). */
  question: string;
  /** Short header. */
  header: string;
  /** Options. */
  options: { label: string; description: string }[];
  /** Whether several options may be chosen. */
  multiSelect: boolean;
}

/** A question the agent waits for. */
export interface PendingQuestion {
  /** JSON-RPC id of the request. */
  id: string;
  /** Questions. */
  questions: QuestionItem[];
}

/** Context and token figures of the latest `StatusUpdate`. */
export interface UsageView {
  /** Fraction 0–1 of the context used, if known. */
  contextUsage: number | null;
  /** Tokens in context. */
  contextTokens: number | null;
  /** Context window size. */
  maxContextTokens: number | null;
  /** Whether plan mode is on. */
  planMode: boolean;
}

/** The whole view model of one session's chat. */
export interface Transcript {
  /** Turns in order. */
  turns: Turn[];
  /** Approvals waiting for an answer, oldest first. */
  approvals: PendingApproval[];
  /** Questions waiting for an answer, oldest first. */
  questions: PendingQuestion[];
  /** Latest usage figures. */
  usage: UsageView;
  /** Latest todo list shown by a tool. */
  todos: { title: string; status: string }[];
  /** The session's goal, if one is set. */
  goal: GoalView | null;
  /** Approvals this tab answered, until the server confirms them (id → what was asked). */
  answered: Record<string, { sender: string; description: string }>;
}

/** An empty transcript. */
export function emptyTranscript(): Transcript {
  return {
    turns: [],
    approvals: [],
    questions: [],
    usage: { contextUsage: null, contextTokens: null, maxContextTokens: null, planMode: false },
    todos: [],
    goal: null,
    answered: {},
  };
}

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** What the user sent: text, images, and the names of files the server folded in (§A6). */
export interface UserInputView {
  /** Text typed by the user. */
  text: string;
  /** Image URLs. */
  images: string[];
  /** Uploaded files named in the prompt. */
  files: string[];
}

const FILES_ONLY_MARKER = "KIMI_FILE_UPLOAD_WITHOUT_MESSAGE";

/**
 * The text, images and uploaded files of a `user_input` (a string or a list of content parts).
 * The server's upload wrappers (`<uploaded_files>` list, `<image …>`/`<video …>` tags,
 * `<document …>` bodies) become file names, not text.
 */
export function userInputView(input: unknown): UserInputView {
  if (typeof input === "string") {
    return { text: input === FILES_ONLY_MARKER ? "" : input, images: [], files: [] };
  }
  if (!Array.isArray(input)) return { text: "", images: [], files: [] };
  const texts: string[] = [];
  const images: string[] = [];
  const files: string[] = [];
  for (const part of input) {
    if (!isObj(part)) continue;
    if (part.type === "image_url" && isObj(part.image_url)) {
      images.push(str(part.image_url.url));
      continue;
    }
    if (part.type !== "text") continue;
    const text = str(part.text);
    const list = /^<uploaded_files>\n?([\s\S]*?)\n?<\/uploaded_files>$/.exec(text.trim());
    if (list) {
      for (const line of list[1].split("\n")) {
        const name = line.replace(/^\d+\.\s*/, "").trim();
        if (name) files.push(name.split("/").pop() ?? name);
      }
      continue;
    }
    if (/^<\/?(image|video|audio)\b[^>]*>$/.test(text.trim())) continue;
    if (/^<document\b[^>]*>[\s\S]*<\/document>$/.test(text.trim())) continue;
    if (text === FILES_ONLY_MARKER) continue;
    texts.push(text);
  }
  return { text: texts.join("\n"), images, files };
}

function currentTurn(t: Transcript): Turn {
  let turn = t.turns.at(-1);
  if (!turn) {
    turn = { index: 0, userText: "", userImages: [], userFiles: [], blocks: [], ended: false };
    t.turns.push(turn);
  }
  return turn;
}

function findTool(blocks: Block[], id: string): ToolBlock | null {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i];
    if (b.kind === "tool") {
      if (b.id === id) return b;
      if (b.subagent) {
        const inner = findTool(b.subagent.blocks, id);
        if (inner) return inner;
      }
    }
  }
  return null;
}

function lastTool(blocks: Block[]): ToolBlock | null {
  const last = blocks.at(-1);
  return last && last.kind === "tool" ? last : null;
}

function resultView(rv: unknown): ToolResultView {
  const r = isObj(rv) ? rv : {};
  const output = typeof r.output === "string"
    ? r.output
    : Array.isArray(r.output)
    ? r.output.map((p) => (isObj(p) && typeof p.text === "string" ? p.text : "")).join("")
    : "";
  return {
    isError: r.is_error === true,
    output,
    message: str(r.message),
    display: Array.isArray(r.display) ? r.display.filter(isObj) as DisplayBlock[] : [],
  };
}

/** Fold one content/tool event into a list of blocks (the turn's or a subagent's). */
function applyToBlocks(blocks: Block[], type: string, payload: Json): void {
  if (type === "StepBegin" || type === "TurnBegin") {
    // The text of a new step (or of a subagent's next turn) is a new paragraph, not the
    // continuation of the last word of the previous one.
    const last = blocks.at(-1);
    if (last && (last.kind === "text" || last.kind === "think") && !last.text.endsWith("\n\n")) {
      last.text += last.text.endsWith("\n") ? "\n" : "\n\n";
    }
  } else if (type === "ContentPart") {
    const last = blocks.at(-1);
    if (payload.type === "text") {
      const text = str(payload.text);
      if (last && last.kind === "text") last.text += text;
      else blocks.push({ kind: "text", text });
    } else if (payload.type === "think") {
      const text = str(payload.think);
      if (last && last.kind === "think") last.text += text;
      else blocks.push({ kind: "think", text });
    } else {
      for (const media of ["image", "audio", "video"] as const) {
        const key = `${media}_url`;
        if (payload.type === key && isObj(payload[key])) {
          blocks.push({ kind: "media", media, url: str((payload[key] as Json).url) });
        }
      }
    }
  } else if (type === "ToolCall") {
    const fn = isObj(payload.function) ? payload.function : {};
    const id = str(payload.id);
    const existing = findTool(blocks, id);
    if (existing) {
      // A replayed record after live chunks of the same call: the merged arguments win.
      existing.args = str(fn.arguments) || existing.args;
      return;
    }
    blocks.push({
      kind: "tool",
      id,
      name: str(fn.name),
      args: str(fn.arguments),
      result: null,
      subagent: null,
    });
  } else if (type === "ToolCallPart") {
    const tool = lastTool(blocks);
    if (tool) tool.args += str(payload.arguments_part);
  } else if (type === "ToolResult") {
    const tool = findTool(blocks, str(payload.tool_call_id));
    if (tool) tool.result = resultView(payload.return_value);
  }
}

/**
 * Fold one wire message into the transcript (mutates it). `msg` is a JSON-RPC frame as the
 * server sends it: `{method:"event"|"request", params:{type, payload}, id?}`; other frames
 * (responses, web-only messages) are ignored here.
 */
export function applyWireMessage(t: Transcript, msg: unknown): void {
  if (!isObj(msg) || !isObj(msg.params)) return;
  const type = str(msg.params.type);
  const payload = isObj(msg.params.payload) ? msg.params.payload : {};
  if (msg.method === "request") {
    applyRequest(t, msg.id, type, payload);
    return;
  }
  if (msg.method !== "event") return;
  switch (type) {
    case "TurnBegin": {
      const { text, images, files } = userInputView(payload.user_input);
      t.turns.push({
        index: t.turns.length,
        userText: text,
        userImages: images,
        userFiles: files,
        blocks: [],
        ended: false,
      });
      t.questions = [];
      return;
    }
    case "SteerInput": {
      const { text } = userInputView(payload.user_input);
      currentTurn(t).blocks.push({ kind: "notice", text: `Steer: ${text}`, tone: "info" });
      return;
    }
    case "TurnEnd":
      currentTurn(t).ended = true;
      t.approvals = [];
      t.questions = [];
      return;
    case "CompactionBegin":
      currentTurn(t).blocks.push({ kind: "compaction", done: false });
      return;
    case "CompactionEnd": {
      const blocks = currentTurn(t).blocks;
      for (let i = blocks.length - 1; i >= 0; i--) {
        const b = blocks[i];
        if (b.kind === "compaction") {
          b.done = true;
          break;
        }
      }
      return;
    }
    case "StepBegin": {
      const turn = currentTurn(t);
      turn.steps = (turn.steps ?? 0) + 1;
      applyToBlocks(turn.blocks, type, payload);
      return;
    }
    case "StepInterrupted":
      currentTurn(t).blocks.push({ kind: "notice", text: "Step interrupted", tone: "warn" });
      return;
    case "StepRetry":
      currentTurn(t).blocks.push({
        kind: "notice",
        text: `Retrying (attempt ${payload.next_attempt ?? "?"} of ${payload.max_attempts ?? "?"})`,
        tone: "warn",
      });
      return;
    case "StatusUpdate":
      if (typeof payload.context_usage === "number") t.usage.contextUsage = payload.context_usage;
      if (typeof payload.context_tokens === "number") {
        t.usage.contextTokens = payload.context_tokens;
      }
      if (typeof payload.max_context_tokens === "number") {
        t.usage.maxContextTokens = payload.max_context_tokens;
      }
      if (typeof payload.plan_mode === "boolean") t.usage.planMode = payload.plan_mode;
      return;
    case "ApprovalResponse":
    case "ApprovalRequestResolved": {
      const id = str(payload.request_id);
      const pending = t.approvals.find((a) => a.id === id) ?? t.answered[id];
      delete t.answered[id];
      t.approvals = t.approvals.filter((a) => a.id !== id);
      const response = str(payload.response);
      const blocks = currentTurn(t).blocks;
      if (!blocks.some((b) => b.kind === "approval" && b.requestId === id)) {
        blocks.push({
          kind: "approval",
          requestId: id,
          sender: pending?.sender ?? "",
          description: pending?.description ?? "",
          response,
        });
      }
      return;
    }
    case "SubagentEvent": {
      const parent = findTool(currentTurn(t).blocks, str(payload.parent_tool_call_id));
      const inner = isObj(payload.event) ? payload.event : {};
      if (!parent) return;
      parent.subagent ??= {
        agentId: str(payload.agent_id),
        type: str(payload.subagent_type),
        blocks: [],
      };
      applyToBlocks(
        parent.subagent.blocks,
        str(inner.type),
        isObj(inner.payload) ? inner.payload : {},
      );
      return;
    }
    case "Notification":
      currentTurn(t).blocks.push({
        kind: "notice",
        text: [str(payload.title), str(payload.body)].filter(Boolean).join(": "),
        tone: payload.severity === "error" ? "error" : "info",
      });
      return;
    case "SessionNotice":
      currentTurn(t).blocks.push({ kind: "notice", text: str(payload.text), tone: "info" });
      return;
    case "GoalUpdate": {
      const g = isObj(payload.goal) ? payload.goal : null;
      const usage = g && isObj(g.usage) ? g.usage : {};
      const budget = g && isObj(g.budget) ? g.budget : {};
      const num = (v: unknown) => (typeof v === "number" ? v : 0);
      const lim = (v: unknown) => (typeof v === "number" ? v : null);
      t.goal = g
        ? {
          objective: str(g.objective),
          status: str(g.status),
          reason: typeof g.reason === "string" ? g.reason : null,
          turns: [num(usage.turns), lim(budget.max_turns)],
          tokens: [num(usage.tokens), lim(budget.max_tokens)],
        }
        : null;
      if (typeof payload.outcome === "string" && payload.outcome) {
        currentTurn(t).blocks.push({
          kind: "notice",
          text: `Goal ${payload.outcome.replaceAll("_", " ")}`,
          tone: "info",
        });
      }
      return;
    }
    case "SwarmUpdate": {
      const tool = findTool(currentTurn(t).blocks, str(payload.parent_tool_call_id));
      if (!tool) return;
      const c = isObj(payload.counts) ? payload.counts : {};
      const n = (v: unknown) => (typeof v === "number" ? v : 0);
      tool.swarm = {
        description: str(payload.description),
        total: n(payload.total),
        counts: {
          pending: n(c.pending),
          running: n(c.running),
          ok: n(c.ok),
          error: n(c.error),
          cancelled: n(c.cancelled),
        },
        done: payload.done === true,
      };
      return;
    }
    case "PlanDisplay":
      currentTurn(t).blocks.push({ kind: "text", text: str(payload.content) });
      return;
    case "ToolResult": {
      applyToBlocks(currentTurn(t).blocks, type, payload);
      const rv = isObj(payload.return_value) ? payload.return_value : {};
      if (Array.isArray(rv.display)) {
        for (const d of rv.display) {
          if (isObj(d) && d.type === "todo" && Array.isArray(d.items)) {
            t.todos = d.items.filter(isObj).map((i) => ({
              title: str(i.title),
              status: str(i.status),
            }));
          }
        }
      }
      return;
    }
    default:
      applyToBlocks(currentTurn(t).blocks, type, payload);
  }
}

function applyRequest(t: Transcript, id: unknown, type: string, payload: Json): void {
  const rid = typeof id === "string" ? id : str(payload.id);
  if (type === "ApprovalRequest") {
    const answered = t.turns.some((turn) =>
      turn.blocks.some((b) => b.kind === "approval" && b.requestId === rid)
    );
    if (answered || t.approvals.some((a) => a.id === rid)) return;
    t.approvals.push({
      id: rid,
      toolCallId: str(payload.tool_call_id),
      sender: str(payload.sender),
      action: str(payload.action),
      description: str(payload.description),
      subagentType: typeof payload.subagent_type === "string" ? payload.subagent_type : null,
      display: Array.isArray(payload.display)
        ? payload.display.filter(isObj) as DisplayBlock[]
        : [],
    });
  } else if (type === "QuestionRequest") {
    if (t.questions.some((q) => q.id === rid)) return;
    const questions = Array.isArray(payload.questions) ? payload.questions.filter(isObj) : [];
    t.questions.push({
      id: rid,
      questions: questions.map((q) => ({
        question: str(q.question),
        header: str(q.header),
        options: Array.isArray(q.options)
          ? q.options.filter(isObj).map((o) => ({
            label: str(o.label),
            description: str(o.description),
          }))
          : [],
        multiSelect: q.multi_select === true,
      })),
    });
  }
}

/** Take an approval off the waiting list once this tab answered it. */
export function markApprovalAnswered(t: Transcript, id: string): void {
  const a = t.approvals.find((x) => x.id === id);
  if (a) t.answered[id] = { sender: a.sender, description: a.description };
  t.approvals = t.approvals.filter((x) => x.id !== id);
}

/** Remove a question once answered (questions have no resolution event on the wire). */
export function resolveQuestion(t: Transcript, id: string): void {
  t.questions = t.questions.filter((q) => q.id !== id);
}
