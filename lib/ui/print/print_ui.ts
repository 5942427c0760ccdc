/**
 * Print mode (reference §11): run one command (text input) or one turn per stdin line
 * (stream-json input), print the merged wire stream, and exit 0, 1 or 75.
 *
 * @module
 */
import { providerErrorHint } from "../provider_hint.ts";
import { type ChatProviderError, isRetryableError } from "../../llm/errors.ts";
import { extractText, MessageSchema, normalizeMessage } from "../../llm/message.ts";
import { RunCancelled } from "../../soul/errors.ts";
import type { KimiApp } from "../../app/kimi_app.ts";
import { runTurn } from "../../soul/run_turn.ts";
import { turnOutcome } from "../../soul/turn_outcome.ts";
import type { UserInput } from "../../wire/messages.ts";
import { waitForBackgroundTasks } from "./background_wait.ts";
import type { GoalOutcome } from "../../wire/messages.ts";
import { createPrinter, type OutputFormat } from "./printers.ts";

/**
 * Exit codes. A run that pursued a goal ends with the goal's outcome: achieved 0, blocked 3,
 * budget exhausted 4, stopped (paused or interrupted) 6; errors keep 1 and 75.
 */
export const ExitCode = {
  SUCCESS: 0,
  FAILURE: 1,
  GOAL_BLOCKED: 3,
  GOAL_BUDGET_EXHAUSTED: 4,
  GOAL_STOPPED: 6,
  RETRYABLE: 75,
} as const;

/** The exit code of a goal run's outcome. */
export function goalExitCode(outcome: GoalOutcome): number {
  switch (outcome) {
    case "achieved":
      return ExitCode.SUCCESS;
    case "blocked":
      return ExitCode.GOAL_BLOCKED;
    case "budget_exhausted":
      return ExitCode.GOAL_BUDGET_EXHAUSTED;
    case "paused":
    case "cancelled":
      return ExitCode.GOAL_STOPPED;
  }
}

/** Options of {@link runPrint}. */
export interface PrintOptions {
  /** `-p` prompt. */
  prompt?: string;
  /** `--input-format`. */
  inputFormat: "text" | "stream-json";
  /** `--output-format`. */
  outputFormat: OutputFormat;
  /** `--final-message-only`. */
  finalOnly: boolean;
  /** Standard input (defaults to the process's). */
  stdin?: ReadableStream<Uint8Array>;
  /** Whether stdin is a terminal. */
  stdinIsTerminal?: boolean;
  /** Writes a line to stdout. */
  writeLine?: (line: string) => void;
  /** Why no model is usable and the fix (printed to stderr after "LLM is not set"). */
  modelProblem?: () => Promise<string | null>;
}

const encoder = new TextEncoder();
function stdoutLine(line: string): void {
  const data = encoder.encode(line + "\n");
  let off = 0;
  while (off < data.length) off += Deno.stdout.writeSync(data.subarray(off));
}

/**
 * Classify a provider error into an exit code: 75 for what the soul would retry (connection,
 * timeout or stall, empty or cut-off response, 429/5xx), 1 otherwise.
 */
export function providerExitCode(err: ChatProviderError): number {
  return isRetryableError(err) ? ExitCode.RETRYABLE : ExitCode.FAILURE;
}

async function* stdinLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      yield buf.slice(0, i);
      buf = buf.slice(i + 1);
    }
  }
  buf += decoder.decode();
  if (buf) yield buf;
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(stream).text();
}

/** Run print mode; resolves with the exit code. */
export async function runPrint(app: KimiApp, opts: PrintOptions): Promise<number> {
  const out = opts.writeLine ?? stdoutLine;
  const stdin = opts.stdin ?? Deno.stdin.readable;
  const ac = new AbortController();
  const onSigint = () => ac.abort(new RunCancelled());
  try {
    Deno.addSignalListener("SIGINT", onSigint);
  } catch {
    // signals unavailable (e.g. Windows service): Ctrl-C ends the process instead
  }
  const wireFile = app.wireFile;
  let command: UserInput | undefined = opts.prompt;
  const isTty = opts.stdinIsTerminal ?? Deno.stdin.isTerminal();
  if (command === undefined && !isTty && opts.inputFormat === "text") {
    command = (await readAll(stdin)).trim();
  }
  const lines = opts.inputFormat === "stream-json" ? stdinLines(stdin) : null;

  const nextCommand = async (): Promise<UserInput | undefined> => {
    if (!lines) return undefined;
    while (true) {
      const r = await lines.next();
      if (r.done) return undefined;
      const line = r.value.trim();
      if (!line) continue;
      try {
        const msg = MessageSchema.parse(JSON.parse(line));
        if (msg.role === "user") {
          // text stays text (slash commands work); media parts reach the model as parts
          const content = normalizeMessage(msg).content;
          return content.every((p) => p.type === "text") ? extractText(content, "\n") : content;
        }
        console.error(`kimi: ignoring message with role \`${msg.role}\`: ${line}`);
      } catch {
        console.error(`kimi: ignoring invalid user message: ${line}`);
      }
    }
  };

  let goalOutcome: GoalOutcome | null = null;
  const success = () => goalOutcome === null ? ExitCode.SUCCESS : goalExitCode(goalOutcome);
  const runOne = async (input: UserInput): Promise<void> => {
    const printer = createPrinter(opts.outputFormat, opts.finalOnly, out);
    await runTurn(app.soul, input, {
      signal: ac.signal,
      wireFile,
      ui: (wire) => {
        const sub = wire.subscribe({ merge: true });
        return (async () => {
          for await (const msg of sub) {
            printer.feed(msg);
            if (msg.type === "StepInterrupted") break;
          }
          printer.flush();
        })();
      },
    }).finally(() => {
      goalOutcome = app.soul.goals?.takeOutcome() ?? goalOutcome;
    });
  };

  try {
    while (true) {
      if (command === undefined) {
        command = await nextCommand();
        if (command === undefined) return success();
      }
      if (command) {
        // the reference's transcript format echoes the command first
        if (opts.outputFormat === "text" && !opts.finalOnly) {
          out(typeof command === "string" ? command : extractText(command, "\n"));
        }
        await runOne(command);
      }
      if (opts.inputFormat === "text") {
        // One-shot runs wait for the background work they started (stream-json input is
        // multi-turn: the next command must not wait for the previous one's tasks).
        const waited = await waitForBackgroundTasks(app, { runTurn: runOne, signal: ac.signal });
        if (ac.signal.aborted) throw new RunCancelled();
        return waited === "timed_out" ? ExitCode.FAILURE : success();
      }
      command = undefined;
    }
  } catch (err) {
    const outcome = turnOutcome(err);
    switch (outcome.kind) {
      case "llm_not_set":
      case "llm_not_supported":
      case "max_steps": {
        out(outcome.message);
        if (outcome.kind === "llm_not_set") {
          const why = await opts.modelProblem?.();
          if (why) console.error(why);
        }
        return ExitCode.FAILURE;
      }
      case "cancelled":
        out("Interrupted by user");
        return goalOutcome === "cancelled" ? ExitCode.GOAL_STOPPED : ExitCode.FAILURE;
      case "auth_expired":
      case "provider": {
        out(outcome.message);
        const hint = providerErrorHint(outcome.error);
        if (hint) console.error(hint);
        return providerExitCode(outcome.error);
      }
      case "session_write":
        out(outcome.message);
        return ExitCode.FAILURE;
      default: // "unexpected"
        out(`Unknown error: ${outcome.message}`);
        throw err;
    }
  } finally {
    try {
      Deno.removeSignalListener("SIGINT", onSigint);
    } catch {
      // ignore
    }
  }
}
