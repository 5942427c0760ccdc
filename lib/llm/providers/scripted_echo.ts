/**
 * The `_scripted_echo` test provider: each `generate` call pops the next echo DSL script from a
 * file named by `KIMI_SCRIPTED_ECHO_SCRIPTS`, ignoring the request (reference §2.4).
 *
 * @module
 */
import { lazyEchoScriptStream } from "../echo_dsl.ts";
import { ChatProviderError } from "../errors.ts";
import type { ChatProvider, ChatRequest, ChatStream, ThinkingEffort } from "../provider.ts";

/** Options of {@link createScriptedEchoProvider}. */
export interface ScriptedEchoOptions {
  /** Reads an environment variable (`KIMI_SCRIPTED_ECHO_SCRIPTS`, `KIMI_SCRIPTED_ECHO_TRACE`, `HOME`). */
  getEnv: (name: string) => string | undefined;
  /** Receives each trace line, without its newline. Default: write it plus `\n` to stdout. */
  writeStdout?: (line: string) => void;
}

const TRACE_ON = new Set(["1", "true", "yes", "on"]);

/**
 * Create the scripted echo provider (name and model `scripted_echo`). The script file is read
 * now: a JSON array of strings, or else plain text split on `\n---\n` (chunks trimmed, empty
 * ones dropped).
 *
 * Providers returned by `withThinking` share this provider's queue and turn counter, so
 * whichever copy the caller keeps consumes the same scripts.
 *
 * @throws {ChatProviderError} when the variable is unset or the file is missing or malformed.
 */
export function createScriptedEchoProvider(opts: ScriptedEchoOptions): ChatProvider {
  const scripts = loadScripts(opts.getEnv);
  const trace = TRACE_ON.has((opts.getEnv("KIMI_SCRIPTED_ECHO_TRACE") ?? "").trim().toLowerCase());
  const write = opts.writeStdout ?? writeLineToStdout;
  return new ScriptedEchoChatProvider({ scripts, turn: 0 }, trace, write);
}

interface ScriptQueue {
  scripts: string[];
  turn: number;
}

class ScriptedEchoChatProvider implements ChatProvider {
  readonly name = "scripted_echo";
  readonly modelName = "scripted_echo";
  readonly thinkingEffort: ThinkingEffort | null = null;
  readonly #queue: ScriptQueue;
  readonly #trace: boolean;
  readonly #write: (line: string) => void;

  constructor(queue: ScriptQueue, trace: boolean, write: (line: string) => void) {
    this.#queue = queue;
    this.#trace = trace;
    this.#write = write;
  }

  generate(_request: ChatRequest): Promise<ChatStream> {
    try {
      return Promise.resolve(this.#next());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #next(): ChatStream {
    const queue = this.#queue;
    const text = queue.scripts.shift();
    if (text === undefined) {
      throw new ChatProviderError(`ScriptedEchoChatProvider exhausted at turn ${queue.turn + 1}.`);
    }
    if (this.#trace) this.#write(`SCRIPTED_ECHO TURN ${queue.turn + 1}: ${pyJsonString(text)}`);
    queue.turn += 1;
    // parsed as it streams: a scripted reply of 100,000 parts is not held parsed whole
    const script = lazyEchoScriptStream(text);
    if (script.error) throw script.error;
    if (script.parts === 0) {
      throw new ChatProviderError("ScriptedEchoChatProvider DSL produced no streamable parts.");
    }
    return script.stream;
  }

  withThinking(_effort: ThinkingEffort): ChatProvider {
    return new ScriptedEchoChatProvider(this.#queue, this.#trace, this.#write);
  }
}

function loadScripts(getEnv: (name: string) => string | undefined): string[] {
  const raw = getEnv("KIMI_SCRIPTED_ECHO_SCRIPTS");
  if (!raw) {
    throw new ChatProviderError("KIMI_SCRIPTED_ECHO_SCRIPTS is required for _scripted_echo.");
  }
  const path = expandUser(raw, getEnv("HOME") ?? getEnv("USERPROFILE"));
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new ChatProviderError(`Scripted echo file not found: ${path}`);
    }
    const reason = err instanceof Error ? err.message : String(err);
    throw new ChatProviderError(`Cannot read scripted echo file ${path}: ${reason}`);
  }
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    const chunks = text.split("\n---\n").map((c) => c.trim()).filter((c) => c !== "");
    if (chunks.length > 0) return chunks;
    throw new ChatProviderError(
      "Scripted echo file must be a JSON array of strings or a text file split by '\\n---\\n'.",
    );
  }
  if (Array.isArray(data) && data.every((x) => typeof x === "string")) return data as string[];
  throw new ChatProviderError("Scripted echo JSON must be an array of strings.");
}

function expandUser(path: string, home: string | undefined): string {
  if (home && (path === "~" || path.startsWith("~/"))) return home + path.slice(1);
  return path;
}

/** Python `json.dumps(str)`: JSON string with every non-ASCII character escaped. */
function pyJsonString(s: string): string {
  return JSON.stringify(s).replace(
    /[\u0080-\uffff]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}

function writeLineToStdout(line: string): void {
  const bytes = new TextEncoder().encode(line + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}
