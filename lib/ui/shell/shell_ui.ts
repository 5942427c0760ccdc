/**
 * The interactive shell (`kimi` on a terminal): welcome line, prompt loop, turns rendered
 * live, approvals and questions as selects, shell-only slash commands, raw shell-command mode
 * (Ctrl-X), and `/setup` on first run.
 *
 * @module
 */
import type { Config } from "../../config/schema.ts";
import { log } from "../../log.ts";
import type { Session } from "../../session/session.ts";
import { RunCancelled } from "../../soul/errors.ts";
import { type TurnOutcome, turnOutcome } from "../../soul/turn_outcome.ts";
import type { KimiApp } from "../../app/kimi_app.ts";
import { runTurn } from "../../soul/run_turn.ts";
import { parseSlashCommand } from "../../soul/soul.ts";
import { unknownSlashCommandText } from "../../soul/slash_commands.ts";
import type { Subscription } from "../../wire/broadcast.ts";
import {
  type Envelope,
  isRequest,
  type PendingRequest,
  type UserInput,
  type WireMessage,
} from "../../wire/messages.ts";
import { AttachmentError, PromptAttachments } from "./attachments.ts";
import { shellKeyBindings } from "./key_bindings.ts";
import { notificationLine } from "./side_lines.ts";
import {
  approvalAttention,
  type Attention,
  goalAttention,
  questionAttention,
  taskAttention,
} from "../../hooks/notification_hooks.ts";
import { attentionSequence, processEnv } from "./attention.ts";
import { askBeside, sideQuestionOf } from "./side_question.ts";
import { providerErrorHint } from "../provider_hint.ts";
import { historyFile, HistoryStore } from "./history_store.ts";
import { LineEditor, type ReadResult, truncateRow, type TurnInputHandlers } from "./line_editor.ts";
import { loadMarkdown } from "./markdown.ts";
import { promptApproval, promptQuestions } from "./request_prompts.ts";
import { findShellCommand, refreshManagedModels, SHELL_COMMANDS } from "./shell_commands.ts";
import type { ShellSwitch } from "./commands/command.ts";
import type { ShellContext } from "./shell_context.ts";
import { runSetup } from "./setup_wizard.ts";
import { formatStatusLine } from "./status_line.ts";
import { Terminal } from "./terminal.ts";
import { wrapCommand } from "../../process/command_wrapper.ts";
import { setTheme, style } from "./theme.ts";
import { formatTranscript, formatWireTranscript } from "./transcript.ts";
import { TurnRenderer } from "./turn_renderer.ts";

/** Options of {@link runShell}. */
export interface ShellOptions {
  /** Build an app for a session and config (same CLI options otherwise). */
  createApp(
    session: Session,
    config: Config,
    modelAlias?: string,
    thinking?: boolean,
  ): Promise<KimiApp>;
  /** Where `/setup`, `/model` and `/theme` save the config (null for `--config` text). */
  configPath: string | null;
  /** The terminal (defaults to the process's). */
  terminal?: Terminal;
  /** Reads the config and MCP server files again, for `/reload` (absent: not supported). */
  reloadSources?: () => Promise<Config>;
  /** `-p`: run this input once in the shell UI, then exit (as the reference does). */
  prompt?: string;
  /** The session was resumed: its earlier conversation is redrawn before the prompt. */
  resumed?: boolean;
  /** A line shown under the welcome (e.g. that `--session ID` started a new session). */
  notice?: string;
  /** Why no model is usable and the fix (null when one is). */
  modelProblem?: () => Promise<string | null>;
}

/** How the shell ended. */
export interface ShellResult {
  /** Exit code. */
  code: number;
  /** The session in use at exit. */
  session: Session;
  /** The front end to hand the session to (`/web`), if any. */
  switchTo?: ShellSwitch;
}

/** Run the shell until the user exits. */
export async function runShell(app: KimiApp, opts: ShellOptions): Promise<ShellResult> {
  const term = opts.terminal ?? new Terminal();
  const shell = new Shell(app, term, opts);
  term.start();
  try {
    return await shell.run();
  } finally {
    term.clearLive();
    term.stop();
  }
}

class Shell implements ShellContext {
  app: KimiApp;
  readonly term: Terminal;
  readonly configPath: string | null;
  contextUsage: number | null = null;
  mcpStatus: ShellContext["mcpStatus"] = null;
  prefill = "";
  readonly #opts: ShellOptions;
  readonly #original: Session;
  /** The last session left (by `/new`, `/sessions`, `/fork`) that held something. */
  #lastWithContent: Session | null = null;
  #history!: HistoryStore;
  #editor!: LineEditor;
  #hub: Subscription<WireMessage> | null = null;
  #modal: Promise<void> = Promise.resolve();
  #modalOpen = false;
  #turnActive = false;
  #renderer: TurnRenderer | null = null;
  #turnInput: TurnInputHandlers | null = null;
  /** Steers sent to the soul and not consumed yet (shown under the output). */
  #steers: string[] = [];
  /** Inputs to run after the current turn (slash commands and unconsumed steers). */
  #afterTurn: string[] = [];
  #queuedApprovals: PendingRequest<"ApprovalRequest">[] = [];
  /** Folded pastes and pasted images of the prompt. */
  readonly #attachments = new PromptAttachments();
  #stopNotifications: (() => void) | null = null;
  /** The last turn failed (a `-p` run then exits 1). */
  #turnFailed = false;
  /** Set by `/web`: the front end the session goes to when the shell ends. */
  #switchTo: ShellSwitch | undefined;

  constructor(app: KimiApp, term: Terminal, opts: ShellOptions) {
    this.app = app;
    this.term = term;
    this.configPath = opts.configPath;
    this.#opts = opts;
    this.#original = app.session;
  }

  print(text: string): void {
    this.term.print(text);
  }

  async run(): Promise<ShellResult> {
    this.#prepareApp();
    setTheme(this.app.config.theme);
    const { shareDir, workDir } = this.app.session;
    this.#history = new HistoryStore(historyFile(shareDir, workDir));
    await this.#history.load();
    this.#editor = new LineEditor({
      term: this.term,
      history: this.#history,
      completion: {
        workDir,
        commands: () => [
          ...SHELL_COMMANDS.flatMap((c) => [c.name, ...c.aliases]),
          ...this.app.soul.commands.flatMap((c) => [c.name, ...c.aliases]),
        ],
        primary: (name) =>
          [...SHELL_COMMANDS, ...this.app.soul.commands].find((c) =>
            c.name === name || c.aliases.includes(name)
          )?.name,
        describe: (name) =>
          [...SHELL_COMMANDS, ...this.app.soul.commands].find((c) =>
            c.name === name || c.aliases.includes(name)
          )?.description,
      },
      footer: () => [this.#statusLine()],
      keyBindings: shellKeyBindings({
        attachments: this.#attachments,
        togglePlanMode: () => this.app.soul.setPlanMode(!this.app.soul.planMode),
        editInEditor: async (text) => {
          const { composeInEditor } = await import("./editor.ts");
          return await composeInEditor(this, text);
        },
      }),
    });
    if (this.#opts.prompt !== undefined) {
      // `kimi -p "..."` on a terminal: one input, rendered as in the shell, then exit
      try {
        await this.#handleInput(this.#opts.prompt, false);
      } finally {
        this.#hub?.unsubscribe();
      }
      return { code: this.#turnFailed ? 1 : 0, session: this.app.session };
    }
    this.#welcome();
    // the login's model list may have changed since the last run (new models, capabilities)
    void refreshManagedModels(this);
    let session: Session;
    if (this.#opts.resumed) await this.showTranscript();
    if (this.#opts.notice) this.print(style.warn(this.#opts.notice));
    if (!this.app.llm) {
      const why = await this.#opts.modelProblem?.();
      if (why) this.print(style.warn(why));
      this.print(style.warn("No model is configured yet. Let's set one up (Esc to skip)."));
      await runSetup(this);
    }
    // warm the markdown renderer while the user types
    setTimeout(() => void loadMarkdown().then(() => this.#turnActive || this.term.refresh()), 1500);
    try {
      while (true) {
        let r: ReadResult;
        const queued = this.#afterTurn.shift();
        if (queued !== undefined) {
          // typed during the last turn and not consumed by it: runs now, as if just entered
          r = { kind: "line", text: queued, shellMode: false };
        } else {
          const initial = this.prefill;
          this.prefill = "";
          r = await this.#editor.read(initial || undefined);
        }
        if (r.kind === "exit") break;
        const text = r.text;
        if (!text.trim()) continue;
        if (queued === undefined) {
          await this.#history.add(this.#attachments.expandPastes(text), r.shellMode);
        }
        if (await this.#handleInput(text, r.shellMode) === "exit") break;
      }
    } finally {
      this.#hub?.unsubscribe();
      this.#stopNotifications?.();
      session = this.app.session;
      if (this.app.session !== this.#original && await this.app.session.isEmpty()) {
        await this.app.session.delete().catch(() => {});
        // the run's session is the last one that holds something (resume hint, --continue)
        if (this.#lastWithContent) session = this.#lastWithContent;
      }
    }
    if (!this.#switchTo) this.print(style.dim("Bye!"));
    return { code: 0, session, switchTo: this.#switchTo };
  }

  /** Run one entered line: a shell command, a slash command or a turn. */
  async #handleInput(text: string, shellMode: boolean): Promise<"exit" | void> {
    const prefix = shellMode ? "$ " : "✨ ";
    this.print(style.prompt(prefix, shellMode) + text.replace(/\n/g, "\n   "));
    text = this.#attachments.expandPastes(text);
    if (shellMode) {
      await this.#runShellCommand(text);
      return;
    }
    const cmd = text.startsWith("/") ? parseSlashCommand(text) : null;
    if (cmd) {
      const shellCmd = findShellCommand(cmd.name);
      if (shellCmd) {
        try {
          const outcome = await shellCmd.run(this, cmd.args);
          if (outcome === "exit") return "exit";
          if (outcome) {
            this.#switchTo = outcome.switchTo;
            return "exit";
          }
        } catch (err) {
          this.print(style.error(`/${cmd.name} failed: ${(err as Error).message}`));
        }
        return;
      }
      const known = this.app.soul.commands.some((c) =>
        c.name === cmd.name || c.aliases.includes(cmd.name)
      );
      if (!known && !cmd.name.includes(":")) {
        const names = [...SHELL_COMMANDS, ...this.app.soul.commands]
          .flatMap((c) => [c.name, ...c.aliases]);
        this.print(style.error(unknownSlashCommandText(cmd.name, names)));
        return;
      }
    }
    let input: UserInput = text;
    if (!cmd) {
      try {
        input = await this.#attachments.toUserInput(text, this.app.session.workDir);
      } catch (err) {
        if (!(err instanceof AttachmentError)) throw err;
        this.print(style.error(`${err.message} Nothing was sent.`));
        this.prefill = text;
        return;
      }
      this.#attachments.clearUnused(this.#editor.text);
    }
    await this.runTurn(input);
  }

  async showTranscript(): Promise<void> {
    const history = this.app.soul.context.history;
    if (!history.some((m) => m.role === "user")) return;
    const md = await loadMarkdown();
    const recorded: Envelope[] = [];
    for await (const r of this.app.wireFile.records()) recorded.push(r.message);
    const text = recorded.some((m) => m.type === "TurnBegin")
      ? formatWireTranscript(recorded, md, this.term.columns)
      : formatTranscript(history, md, this.term.columns);
    if (text) this.print(text + "\n" + style.dim("─".repeat(Math.min(40, this.term.columns))));
  }

  #welcome(): void {
    const llm = this.app.llm;
    const model = llm ? `${llm.modelAlias || llm.provider.modelName}` : "not set";
    const s = this.app.session;
    this.print(
      `${style.bold("Welcome to Kimi!")} ${style.dim("Send /help for help, Ctrl-D to exit.")}\n` +
        style.dim(`Model: ${model} · Work dir: ${s.workDir} · Session: ${s.id}`),
    );
  }

  #statusLine(): string {
    const soul = this.app.soul;
    return formatStatusLine({
      model: this.app.llm ? (this.app.llm.modelAlias || this.app.llm.provider.modelName) : "",
      contextUsage: this.contextUsage ??
        (this.app.llm && soul.context.tokenCount > 0
          ? soul.context.tokenCount / this.app.llm.maxContextSize
          : null),
      yolo: soul.approval.state.yolo,
      afk: soul.approval.state.afk,
      plan: soul.planMode,
      shellMode: this.#turnActive ? false : this.#editor?.shellMode ?? false,
      busy: this.#turnActive,
    });
  }

  /** Things every app needs when it becomes the shell's app. */
  #prepareApp(): void {
    this.app.supportsQuestions = true;
    this.#stopNotifications?.();
    // finished background work is told here at once, even while idle at the prompt
    this.#stopNotifications = this.app.onNotification((e) => {
      if (e.type !== "Notification") return;
      this.print(notificationLine(e.payload));
      this.#attend(taskAttention(e.payload));
    });
    this.#hub?.unsubscribe();
    const hub = this.app.soul.approval.subscribe();
    this.#hub = hub;
    (async () => {
      for await (const msg of hub) {
        if (!isRequest(msg) || msg.type !== "ApprovalRequest") continue;
        const req = msg as PendingRequest<"ApprovalRequest">;
        if (this.#turnActive) this.#enqueueModal(req);
        else this.#queuedApprovals.push(req);
      }
    })();
  }

  reloadSources(): Promise<Config | null> {
    return this.#opts.reloadSources?.() ?? Promise.resolve(null);
  }

  async replaceApp(
    o: { session?: Session; config?: Config; modelAlias?: string; thinking?: boolean },
  ): Promise<void> {
    const old = this.app;
    const session = o.session ?? old.session;
    const next = await this.#opts.createApp(
      session,
      o.config ?? old.config,
      o.modelAlias,
      o.thinking,
    );
    old.closeNotifications();
    if (session !== old.session) {
      if (!(await old.session.isEmpty())) this.#lastWithContent = old.session;
      else if (old.session !== this.#original) await old.session.delete().catch(() => {});
    }
    this.app = next;
    this.contextUsage = null;
    this.#prepareApp();
  }

  /** Call the user back (bell, desktop notification), as `[notifications]` allows. */
  #attend(a: Attention): void {
    const n = this.app.config.notifications;
    const seq = attentionSequence(a, {
      terminalBell: n.terminal_bell,
      desktop: n.desktop,
      focused: this.term.focused,
      env: processEnv,
    });
    if (seq) this.term.writeControl(seq);
  }

  #enqueueModal(req: PendingRequest): void {
    this.#modal = this.#modal.then(async () => {
      if (req.settled) return;
      this.#modalOpen = true;
      try {
        // let the turn's stream catch up (the tool call line and text before it come first)
        await new Promise((r) => setTimeout(r, 30));
        await this.#renderer?.pause();
        if (req.settled) return;
        if (req.type === "ApprovalRequest") {
          const ar = req as PendingRequest<"ApprovalRequest">;
          const callId = ar.payload.tool_call_id;
          this.#attend(approvalAttention(ar.payload));
          const r = await promptApproval(this.term, ar, {
            args: this.#renderer?.callArgs(callId),
            mcpServer: this.#mcpServerOf(ar.payload.action),
            interrupt: () => this.#turnInput?.onInterrupt(),
          });
          this.#renderer?.approvalShown(callId);
          ar.resolve(r);
        } else if (req.type === "QuestionRequest") {
          const qr = req as PendingRequest<"QuestionRequest">;
          this.#attend(questionAttention(qr.payload.questions));
          const r = await promptQuestions(this.term, qr);
          qr.resolve(r);
        }
      } catch (err) {
        log("ERROR", "shell", `request prompt failed: ${(err as Error).message}`);
      } finally {
        this.#modalOpen = false;
        this.#installTurnKeys();
        this.#renderer?.resume();
      }
    });
  }

  /** The MCP server that has the tool of an `mcp:<tool>` approval action. */
  #mcpServerOf(action: string): string | undefined {
    if (!action.startsWith("mcp:")) return undefined;
    const tool = action.slice(4);
    const status = this.app.mcp?.status() ?? this.mcpStatus;
    return status?.servers.find((s) => s.tools.includes(tool))?.name;
  }

  #installTurnKeys(): void {
    const handlers = this.#turnInput;
    if (!handlers || !this.#turnActive) return;
    this.#editor.attachTurn(handlers);
  }

  /** The rows under a running turn's output: pending steers and queued inputs, then the input. */
  #turnInputFrame(): { rows: string[]; cursor: { row: number; col: number } | null } {
    const cols = this.term.columns;
    const rows: string[] = [];
    for (const s of this.#steers) {
      rows.push(truncateRow(style.dim(`↳ ${oneLine(s)} (sent after the current step)`), cols));
    }
    for (const s of this.#afterTurn) {
      rows.push(truncateRow(style.dim(`↳ ${oneLine(s)} (queued for after this turn)`), cols));
    }
    const f = this.#editor.frame();
    return {
      rows: [...rows, ...f.rows],
      // nothing typed ahead: no visible cursor, so the live area keeps the cursor at its top,
      // where erasing it stays exact through a resize while the stream redraws (see
      // Terminal.render); the cursor shows again with the first key typed
      cursor: this.#editor.text === ""
        ? null
        : { row: rows.length + f.cursor.row, col: f.cursor.col },
    };
  }

  async runTurn(input: UserInput): Promise<void> {
    const ac = new AbortController();
    const renderer = new TurnRenderer({
      term: this.term,
      markdown: loadMarkdown,
      showThinking: this.app.config.show_thinking_stream,
      // one row, like the prompt's footer: a wrapped row would break the live area's row count
      statusLine: () => truncateRow(this.#statusLine(), this.term.columns),
      input: () => this.#turnInputFrame(),
      steer: (text) => style.prompt("✨ ", false) + text.replace(/\n/g, "\n   "),
      quietCompaction: typeof input === "string" && /^\/compact\b/.test(input.trim()),
      toolOutput: this.app.run.toolOutput,
      onStatus: (s) => {
        if (s.contextUsage !== null) this.contextUsage = s.contextUsage;
      },
    });
    this.#renderer = renderer;
    this.#turnActive = true;
    this.#steers = [];
    this.#turnInput = {
      onSubmit: (text) => {
        void this.#history.add(text);
        const side = sideQuestionOf(text);
        // a side question is answered now, beside the turn
        if (side !== null) void askBeside(this, side).then(() => renderer.redraw());
        // everything else waits for the end of the turn (as in the reference); Ctrl-S steers
        else this.#afterTurn.push(text);
        renderer.redraw();
      },
      onSteer: (text) => {
        void this.#history.add(text);
        // a command is not a message for the model: it still waits for the turn's end
        if (text.startsWith("/")) this.#afterTurn.push(text);
        else {
          const steer = this.#attachments.expandPastes(text);
          this.#steers.push(steer);
          this.app.soul.steer(steer);
        }
        renderer.redraw();
      },
      onInterrupt: () => {
        if (!ac.signal.aborted) ac.abort(new RunCancelled());
      },
      render: () => renderer.redraw(),
    };
    this.#installTurnKeys();
    for (const req of this.#queuedApprovals.splice(0)) this.#enqueueModal(req);
    const wireFile = this.app.wireFile;
    try {
      await runTurn(this.app.soul, input, {
        signal: ac.signal,
        wireFile,
        ui: (wire) => {
          const sub = wire.subscribe({ merge: false });
          return (async () => {
            for await (const msg of sub) {
              if (isRequest(msg)) {
                if (msg.type === "QuestionRequest") this.#enqueueModal(msg);
                else if (msg.type === "ApprovalRequest") this.#enqueueModal(msg);
                continue;
              }
              if (msg.type === "StatusUpdate" && msg.payload.mcp_status) {
                this.mcpStatus = msg.payload.mcp_status;
              }
              if (msg.type === "SteerInput") this.#steers.shift();
              if (msg.type === "GoalUpdate") {
                const ended = goalAttention(msg.payload);
                if (ended) this.#attend(ended);
              }
              await renderer.feed(msg);
            }
          })();
        },
      });
      await renderer.finish();
      this.#turnFailed = false;
    } catch (err) {
      await renderer.finish();
      this.#turnFailed = true;
      const outcome = turnOutcome(err);
      this.print(describeTurnError(outcome));
      if (outcome.kind === "auth_expired") {
        // the login ran out: the next prompt offers to sign in again (the message says to run
        // /login, which the prompt now holds)
        if (!this.prefill) this.prefill = "/login";
      } else if (outcome.kind === "llm_not_set") {
        const why = await this.#opts.modelProblem?.();
        if (why) this.print(style.warn(why));
      } else if (outcome.kind === "provider") {
        const hint = providerErrorHint(outcome.error);
        if (hint) this.print(style.warn(hint));
      }
    } finally {
      this.#turnActive = false;
      this.#turnInput = null;
      // keys typed from here on wait in the terminal for the next prompt
      this.#editor.detachTurn();
      const unconsumed = this.#steers.splice(0);
      if (unconsumed.length > 0) {
        // the soul stopped before taking them: an interrupted turn hands them back to the
        // prompt; otherwise they run next, as the user asked
        if (ac.signal.aborted) {
          this.#editor.restore(unconsumed.join("\n"));
          this.#afterTurn = [];
        } else this.#afterTurn.unshift(unconsumed.join("\n"));
      } else if (ac.signal.aborted) {
        const queued = this.#afterTurn.splice(0);
        if (queued.length > 0) this.#editor.restore(queued.join("\n"));
      }
      if (this.#modalOpen) this.term.inject({ name: "escape" });
      await this.#modal;
      this.#renderer = null;
    }
  }

  async #runShellCommand(command: string): Promise<void> {
    const ac = new AbortController();
    this.term.setHandler((k) => {
      if (k.name === "ctrl-c") ac.abort();
    });
    this.term.render([style.dim("Running… (ctrl-c to stop)")]);
    try {
      // In a pid namespace of its own (when bwrap is usable): kimi's /proc stays out of reach.
      const cwd = this.app.session.workDir;
      const [program, ...args] = wrapCommand(this.app.userCommands, ["bash", "-c", command], {
        cwd,
        env: {},
      });
      const child = new Deno.Command(program, {
        args,
        cwd,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: ac.signal,
      }).spawn();
      const decoder = new TextDecoder();
      const pump = async (stream: ReadableStream<Uint8Array>) => {
        let buf = "";
        for await (const chunk of stream) {
          buf += decoder.decode(chunk, { stream: true });
          const i = buf.lastIndexOf("\n");
          if (i >= 0) {
            this.print(buf.slice(0, i));
            buf = buf.slice(i + 1);
          }
        }
        if (buf) this.print(buf);
      };
      await Promise.all([pump(child.stdout), pump(child.stderr)]);
      const status = await child.status;
      if (ac.signal.aborted) this.print(style.warn("Interrupted."));
      else if (!status.success) this.print(style.dim(`(exit code ${status.code})`));
    } catch (err) {
      if (err instanceof Deno.errors.NotCapable) {
        this.print(style.error(
          "Shell mode cannot run commands: this run has no permission to run programs " +
            "(Deno's --allow-run). Start kimi with `deno task workspace` or `deno task full`, " +
            "or add --allow-run; Ctrl-X goes back to agent mode.",
        ));
      } else this.print(style.error(`Could not run the command: ${(err as Error).message}`));
    } finally {
      this.term.clearLive();
      this.term.setHandler(null);
    }
  }
}

/** Text on one row (line breaks shown as spaces). */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

/** The line shown when a turn fails. */
function describeTurnError(outcome: TurnOutcome): string {
  switch (outcome.kind) {
    case "cancelled":
      return style.warn("Interrupted by user");
    case "llm_not_set":
      return style.error(
        "LLM not set: no usable model. Run /setup to choose a platform and model.",
      );
    case "llm_not_supported":
    case "max_steps":
    case "auth_expired":
    case "session_write":
      return style.error(outcome.message);
    case "provider":
      return style.error(`Model error: ${outcome.message}`);
    case "unexpected": {
      const err = outcome.error;
      log("ERROR", "shell", `turn failed: ${(err as Error)?.stack ?? err}`);
      return style.error(`Unexpected error: ${outcome.message}`);
    }
  }
}
