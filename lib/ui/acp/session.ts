/**
 * One ACP session: a kimi session with its agent, the running prompt turn, approvals as
 * `session/request_permission`, history replay, and the mode and model switches.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import { saveConfig } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import { log } from "../../log.ts";
import type { Session } from "../../session/session.ts";
import { RunCancelled } from "../../soul/errors.ts";
import { turnOutcome } from "../../soul/turn_outcome.ts";
import type { KimiApp } from "../../app/kimi_app.ts";
import { runTurn } from "../../soul/run_turn.ts";
import type { Subscription } from "../../wire/broadcast.ts";
import {
  type ApprovalResponseKind,
  fromEnvelope,
  isRequest,
  type PendingRequest,
  type RequestType,
  type UserInput,
  type WireMessage,
} from "../../wire/messages.ts";
import { approvalChoices, type ApprovalOptionKind } from "../../wire/approval_options.ts";
import { noModelError } from "./auth.ts";
import { promptToUserInput, UnsupportedPromptContent } from "./prompt.ts";
import {
  configOptions,
  currentMode,
  type ModeId,
  type ModelChoice,
  modelId,
  MODES,
} from "./session_config.ts";
import { diffContent, textContent, TurnMapper } from "./updates.ts";

/** ACP kinds of the approval layer's choices ("always" in ACP = this session's grant). */
const PERMISSION_KINDS: Record<ApprovalOptionKind, acp.PermissionOptionKind> = {
  allow_once: "allow_once",
  allow_session: "allow_always",
  allow_always: "allow_always",
  reject_once: "reject_once",
};

/** The permission options of an approval: the approval layer's choices, in order. */
export function permissionOptions(
  req: { grant_patterns?: readonly string[]; rule_file?: string | null },
): acp.PermissionOption[] {
  return approvalChoices(req).map((c) => ({
    optionId: c.id,
    name: c.label,
    kind: PERMISSION_KINDS[c.kind],
  }));
}

/** Builds the agent of a session (the server's composition of config, MCP and backends). */
export type AppFactory = (
  session: Session,
  opts: {
    modelAlias?: string;
    thinking: boolean | null;
    resumed: boolean;
    /** Apply the command line's `--yolo`/`--plan` (not when rebuilding for a model switch). */
    applyFlags: boolean;
  },
) => Promise<KimiApp>;

/** Options of {@link AcpSession}. */
export interface AcpSessionOptions {
  /** The connection to the client. */
  client: acp.AgentContext;
  /** The kimi session. */
  session: Session;
  /** Builds (and rebuilds, on a model switch) the agent. */
  createApp: AppFactory;
  /** The config file a model switch is saved to (null: `--config` text, not saved). */
  configPath: string | null;
  /** `--model`, `--thinking` of the command line. */
  modelAlias?: string;
  /** Thinking override (null: `default_thinking`). */
  thinking: boolean | null;
  /** Whether the session existed before. */
  resumed: boolean;
  /** Whether a prompt error means the login is missing or expired (see `AcpLogin`). */
  isAuthError?: (err: unknown) => boolean;
}

interface ActiveTurn {
  abort: AbortController;
  done: Promise<unknown>;
}

/** A session served over ACP. */
export class AcpSession {
  readonly #opts: AcpSessionOptions;
  #app!: KimiApp;
  #hub: Subscription<WireMessage> | null = null;
  #turn: ActiveTurn | null = null;
  #mapper: TurnMapper | null = null;
  readonly #terminals = new Map<string, string>();
  #modelAlias: string | undefined;
  #thinking: boolean | null;
  #lastMode: ModeId = "default";
  #planShown: string | null = null;
  #lastTitle: string | null = null;
  #closed = false;

  private constructor(opts: AcpSessionOptions) {
    this.#opts = opts;
    this.#modelAlias = opts.modelAlias;
    this.#thinking = opts.thinking;
  }

  /** Build the agent of `opts.session` and start answering its approvals. */
  static async open(opts: AcpSessionOptions): Promise<AcpSession> {
    const s = new AcpSession(opts);
    s.#attach(
      await opts.createApp(opts.session, {
        modelAlias: opts.modelAlias,
        thinking: opts.thinking,
        resumed: opts.resumed,
        applyFlags: true,
      }),
    );
    s.#lastMode = s.mode;
    if (opts.resumed) s.#lastTitle = await opts.session.title();
    return s;
  }

  /** Session id (the kimi session id). */
  get id(): string {
    return this.#opts.session.id;
  }

  /** The agent. */
  get app(): KimiApp {
    return this.#app;
  }

  /** The current mode. */
  get mode(): ModeId {
    return currentMode({
      planMode: this.#app.soul.planMode,
      yolo: this.#app.soul.approval.state.yolo,
    });
  }

  /** The mode state for session responses. */
  modes(): acp.SessionModeState {
    return { currentModeId: this.mode, availableModes: [...MODES] };
  }

  /** The config options (mode, model) for session responses. */
  configOptions(): acp.SessionConfigOption[] {
    const config = this.#app.config;
    const alias = this.#app.llm?.modelAlias || this.#modelAlias || config.default_model;
    const thinking = this.#thinking ?? config.default_thinking;
    return configOptions({ mode: this.mode, modelId: modelId(alias, thinking, config), config });
  }

  /** The slash commands and skills, for `available_commands_update`. */
  availableCommands(): acp.AvailableCommand[] {
    return this.#app.soul.commands.map((c) => ({ name: c.name, description: c.description }));
  }

  /** Send one update to the client. */
  async send(update: acp.SessionUpdate): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#opts.client.notify(acp.methods.client.session.update, {
        sessionId: this.id,
        update,
      });
    } catch (err) {
      log("WARNING", "acp", `could not send an update: ${(err as Error).message}`);
    }
  }

  /** Tell the client about the slash commands and skills. */
  async announceCommands(): Promise<void> {
    await this.send({
      sessionUpdate: "available_commands_update",
      availableCommands: this.availableCommands(),
    });
  }

  #attach(app: KimiApp): void {
    this.#app = app;
    app.supportsQuestions = true; // asked as permission requests, one per question
    const hub = app.soul.approval.subscribe();
    this.#hub = hub;
    (async () => {
      for await (const msg of hub) {
        if (isRequest(msg) && msg.type === "ApprovalRequest") {
          const req = msg as PendingRequest<"ApprovalRequest">;
          this.#askPermission(req).catch((err) => answerFailed(req, err));
        }
      }
    })();
  }

  async #askPermission(req: PendingRequest<"ApprovalRequest">): Promise<void> {
    const p = req.payload;
    const mapper = this.#mapper;
    const known = mapper?.describe(p.tool_call_id) ?? null;
    const diff = diffContent(p.display);
    const toolCall: acp.ToolCallUpdate = {
      toolCallId: mapper ? mapper.acpToolCallId(p.tool_call_id) : `approval/${p.id}`,
      title: known?.title ?? `${p.sender}: ${p.description}`,
      kind: known?.kind ?? "other",
      content: diff.length > 0
        ? diff
        : [textContent(`Requesting approval to perform: ${p.description}`)],
    };
    const cancel = new AbortController();
    req.result.then(() => cancel.abort());
    const options = permissionOptions(p);
    let response: ApprovalResponseKind = "reject";
    try {
      const r = await this.#opts.client.request(
        acp.methods.client.session.requestPermission,
        { sessionId: this.id, toolCall, options },
        { cancellationSignal: cancel.signal },
      );
      if (r.outcome.outcome === "selected") {
        const id = r.outcome.optionId;
        const picked = options.find((o) => o.optionId === id);
        if (picked) response = picked.optionId as ApprovalResponseKind;
      }
    } catch (err) {
      if (!req.settled) {
        log("WARNING", "acp", `permission request failed: ${(err as Error).message}`);
      }
    }
    req.resolve({ request_id: p.id, response, feedback: "" });
  }

  /**
   * Questions (AskUserQuestion, plan mode) as permission requests, one per question, its
   * options the choices (a multi-select question takes one choice). Cancelled: dismissed.
   */
  async #askQuestions(req: PendingRequest<"QuestionRequest">): Promise<void> {
    const p = req.payload;
    const mapper = this.#mapper;
    const cancel = new AbortController();
    req.result.then(() => cancel.abort());
    const answers: Record<string, string> = {};
    try {
      for (const q of p.questions) {
        const plan = this.#planShown;
        this.#planShown = null;
        const body = [plan, q.body].filter((t): t is string => Boolean(t));
        const r = await this.#opts.client.request(
          acp.methods.client.session.requestPermission,
          {
            sessionId: this.id,
            toolCall: {
              toolCallId: mapper ? mapper.acpToolCallId(p.tool_call_id) : `question/${p.id}`,
              title: q.header ? `${q.header}: ${q.question}` : q.question,
              content: body.map(textContent),
            },
            options: q.options.map((o, i): acp.PermissionOption => ({
              optionId: String(i),
              name: o.label,
              kind: /^(reject|no|decline|cancel)\b/i.test(o.label) ? "reject_once" : "allow_once",
            })),
          },
          { cancellationSignal: cancel.signal },
        );
        if (r.outcome.outcome !== "selected") {
          req.resolve({ request_id: p.id, answers: {} });
          return;
        }
        const chosen = q.options[Number(r.outcome.optionId)];
        if (chosen) answers[q.question] = chosen.label;
      }
    } catch (err) {
      if (!req.settled) log("WARNING", "acp", `question failed: ${(err as Error).message}`);
    }
    req.resolve({ request_id: p.id, answers });
  }

  /** Run a prompt turn; resolves with the stop reason. */
  async prompt(blocks: readonly acp.ContentBlock[]): Promise<acp.StopReason> {
    if (this.#turn) {
      if (!this.#turn.abort.signal.aborted) {
        throw acp.RequestError.invalidRequest(
          { sessionId: this.id },
          "a prompt is already running in this session; send session/cancel first",
        );
      }
      await this.#turn.done.catch(() => {});
    }
    let parts;
    try {
      parts = promptToUserInput(blocks);
    } catch (err) {
      if (err instanceof UnsupportedPromptContent) {
        throw acp.RequestError.invalidParams({ prompt: err.message }, err.message);
      }
      throw err;
    }
    const input: UserInput = parts.length === 1 && parts[0].type === "text" ? parts[0].text : parts;
    const abort = new AbortController();
    const run = this.#run(input, abort.signal);
    const turn: ActiveTurn = { abort, done: run };
    this.#turn = turn;
    try {
      return await run;
    } finally {
      if (this.#turn === turn) this.#turn = null;
    }
  }

  async #run(input: UserInput, signal: AbortSignal): Promise<acp.StopReason> {
    const app = this.#app;
    const mapper = new TurnMapper({
      turnId: crypto.randomUUID(),
      workDir: app.session.workDir,
      terminalOf: (id) => this.#terminals.get(id),
    });
    this.#mapper = mapper;
    this.#terminals.clear();
    try {
      const result = await runTurn(app.soul, input, {
        signal,
        wireFile: app.wireFile,
        ui: (wire) => {
          const sub = wire.subscribe({ merge: false });
          return (async () => {
            for await (const msg of sub) {
              if (isRequest(msg)) {
                if (msg.type === "QuestionRequest") {
                  const req = msg as PendingRequest<"QuestionRequest">;
                  this.#askQuestions(req).catch((err) => answerFailed(req, err));
                } else settleUnanswerable(msg);
                continue;
              }
              if (msg.type === "PlanDisplay") this.#planShown = msg.payload.content;
              for (const u of mapper.map(msg)) await this.send(u);
              if (msg.type === "StatusUpdate" && msg.payload.plan_mode !== null) {
                await this.#modeChanged();
              }
            }
          })();
        },
      });
      await this.#modeChanged(); // e.g. `/yolo` or `/plan` typed as a prompt
      await this.#titleChanged();
      // A UserPromptSubmit hook refused the prompt (its reason was streamed as text).
      return result.reason === "prompt_blocked" ? "refusal" : "end_turn";
    } catch (err) {
      const outcome = turnOutcome(err, { aborted: signal.aborted });
      switch (outcome.kind) {
        case "cancelled":
          return "cancelled";
        case "max_steps":
          return "max_turn_requests";
        case "llm_not_set":
          throw noModelError();
        case "llm_not_supported":
          throw acp.RequestError.invalidParams({ error: outcome.message }, outcome.message);
      }
      if (
        outcome.kind === "auth_expired" || (outcome.kind === "provider" && outcome.unauthorized) ||
        this.#opts.isAuthError?.(err)
      ) {
        const message = (err as Error).message;
        throw acp.RequestError.authRequired({ error: message }, message);
      }
      if (outcome.kind === "provider") {
        throw acp.RequestError.internalError({ error: outcome.message });
      }
      log("ERROR", "acp", `unexpected error in prompt: ${(err as Error)?.stack ?? err}`);
      throw acp.RequestError.internalError({ error: (err as Error)?.message ?? String(err) });
    } finally {
      this.#mapper = null;
    }
  }

  /** Cancel the running turn (nothing to do when idle). Returns whether a turn was running. */
  cancel(): boolean {
    if (!this.#turn) return false;
    this.#turn.abort.abort(new RunCancelled());
    return true;
  }

  /** Show a client terminal in its tool call (Shell in a client terminal). */
  async showTerminal(toolCallId: string, terminalId: string): Promise<void> {
    const mapper = this.#mapper;
    if (!mapper?.knows(toolCallId)) return;
    this.#terminals.set(toolCallId, terminalId);
    await this.send({
      sessionUpdate: "tool_call_update",
      toolCallId: mapper.acpToolCallId(toolCallId),
      status: "in_progress",
      content: [{ type: "terminal", terminalId }],
    });
  }

  /** Replay the recorded history (`wire.jsonl`) as updates. */
  async replay(): Promise<void> {
    const file = this.#app.wireFile;
    const workDir = this.#app.session.workDir;
    let mapper = new TurnMapper({ turnId: crypto.randomUUID(), workDir });
    for await (const rec of file.records()) {
      let parsed;
      try {
        parsed = fromEnvelope(rec.message);
      } catch {
        continue;
      }
      if (parsed.kind !== "event") continue;
      const ev = parsed.event;
      if (ev.type === "TurnBegin") {
        mapper = new TurnMapper({ turnId: crypto.randomUUID(), workDir });
        for (const u of mapper.userInput(ev.payload.user_input)) await this.send(u);
      } else if (ev.type === "SteerInput") {
        for (const u of mapper.userInput(ev.payload.user_input)) await this.send(u);
      } else {
        for (const u of mapper.map(ev)) await this.send(u);
      }
    }
    const todos = this.#app.session.state.todos;
    if (todos.length > 0) {
      await this.send({
        sessionUpdate: "plan",
        entries: todos.map((t) => ({
          content: t.title,
          priority: "medium",
          status: t.status === "done" ? "completed" : t.status,
        })),
      });
    }
  }

  /** Tell the client the session's title once it has one (or it changed), with the time. */
  async #titleChanged(): Promise<void> {
    const session = this.#app.session;
    const title = await session.title();
    if (title === this.#lastTitle) return;
    this.#lastTitle = title;
    const updated = await session.updatedAt();
    await this.send({
      sessionUpdate: "session_info_update",
      title,
      updatedAt: updated ? new Date(updated).toISOString() : null,
    });
  }

  async #modeChanged(): Promise<void> {
    const mode = this.mode;
    if (mode === this.#lastMode) return;
    this.#lastMode = mode;
    await this.send({ sessionUpdate: "current_mode_update", currentModeId: mode });
    await this.send({ sessionUpdate: "config_option_update", configOptions: this.configOptions() });
  }

  /** Switch mode: default (ask), plan (plan mode), yolo (approve everything). */
  async setMode(mode: ModeId): Promise<void> {
    const soul = this.#app.soul;
    await soul.setPlanMode(mode === "plan");
    await soul.approval.state.setYolo(mode === "yolo");
    this.#lastMode = this.mode;
  }

  /** Switch the model (rebuilds the agent between turns; saved as the default). */
  async setModel(choice: ModelChoice): Promise<void> {
    if (this.#turn) {
      throw acp.RequestError.invalidRequest(
        { sessionId: this.id },
        "the model cannot change while a prompt is running; cancel it or wait for it to end",
      );
    }
    const old = this.#app;
    const config: Config = {
      ...old.config,
      default_model: choice.alias,
      default_thinking: choice.thinking,
    };
    if (this.#opts.configPath) {
      try {
        await saveConfig(config, this.#opts.configPath);
      } catch (err) {
        log("WARNING", "acp", `could not save the model choice: ${(err as Error).message}`);
      }
    }
    this.#hub?.unsubscribe();
    await old.mcp?.close();
    this.#modelAlias = choice.alias;
    this.#thinking = choice.thinking;
    this.#attach(
      await this.#opts.createApp(this.#opts.session, {
        modelAlias: choice.alias,
        thinking: choice.thinking,
        resumed: true,
        applyFlags: false,
      }),
    );
  }

  /** Stop: cancel the turn, stop following approvals, close MCP clients. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.cancel();
    await this.#turn?.done.catch(() => {});
    this.#closed = true;
    this.#app.soul.approval.cancelForeground();
    this.#hub?.unsubscribe();
    await this.#app.mcp?.close();
  }
}

/** A request whose asking failed: logged, and rejected (approvals) or dismissed (questions). */
function answerFailed(req: PendingRequest, err: unknown): void {
  log("ERROR", "acp", `${req.type} failed: ${(err as Error)?.message ?? err}`);
  const id = req.payload.id;
  const r = req as PendingRequest<RequestType>;
  if (req.type === "ApprovalRequest") {
    r.resolve({ request_id: id, response: "reject", feedback: "" } as never);
  } else r.resolve({ request_id: id, answers: {} } as never);
}

/** Requests ACP cannot show are settled at once (hooks allowed, no external tools). */
function settleUnanswerable(req: PendingRequest): void {
  const id = req.payload.id;
  const r = req as PendingRequest<RequestType>;
  switch (req.type) {
    case "HookRequest":
      r.resolve({ request_id: id, action: "allow", reason: "" } as never);
      break;
    case "ApprovalRequest":
      break; // answered through the approval hub
    default:
      r.resolve({
        tool_call_id: id,
        return_value: {
          is_error: true,
          output: "",
          message: "The ACP client has no external tools.",
          display: [],
          extras: null,
        },
      } as never);
  }
}
