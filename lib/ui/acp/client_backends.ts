/**
 * The client's files and terminal as tool backends: `fs/read_text_file` and
 * `fs/write_text_file` (unsaved editor buffers are what the agent reads; its edits land in the
 * editor), and `terminal/*` for Shell's foreground commands. Tools have already checked the
 * path or run permission (the Deno floor) and asked for approval before these are called.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import type { ShellOutcome } from "../../process/shell_process.ts";
import { type FileBackend, remoteFileBackend } from "../../tooling/file_backend.ts";
import type {
  TerminalBackend,
  TerminalRun,
  TerminalRunOptions,
} from "../../tooling/terminal_backend.ts";

/** An error from the client, as a message naming the method. */
function clientFailure(method: string, err: unknown): Error {
  const msg = err instanceof Error ? err.message : String(err);
  const data = (err as { data?: unknown })?.data;
  const detail = data === undefined ? "" : ` ${JSON.stringify(data)}`;
  return new Error(`The editor could not ${method}: ${msg}${detail}`);
}

/**
 * A file backend over the client's `fs` methods, or `null` when the client offers neither.
 * Each side the client does not offer stays on the local disk.
 */
export function clientFileBackend(
  client: acp.AgentContext,
  sessionId: string,
  caps: acp.ClientCapabilities | undefined,
): FileBackend | null {
  const canRead = caps?.fs?.readTextFile === true;
  const canWrite = caps?.fs?.writeTextFile === true;
  if (!canRead && !canWrite) return null;
  return remoteFileBackend({
    read: canRead
      ? async (path) => {
        try {
          const r = await client.request(acp.methods.client.fs.readTextFile, { sessionId, path });
          return r.content;
        } catch (err) {
          throw clientFailure(`read ${path}`, err);
        }
      }
      : undefined,
    write: canWrite
      ? async (path, content) => {
        try {
          await client.request(acp.methods.client.fs.writeTextFile, { sessionId, path, content });
        } catch (err) {
          throw clientFailure(`write ${path}`, err);
        }
      }
      : undefined,
  });
}

/** Most output bytes the client keeps for one command. */
export const TERMINAL_OUTPUT_LIMIT = 1 << 20;

const SIGNAL_NUMBERS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGKILL: 9,
  SIGTERM: 15,
};

function exitStatus(r: { exitCode?: number | null; signal?: string | null }) {
  if (typeof r.exitCode === "number") return { code: r.exitCode, signal: null };
  const sig = r.signal ?? null;
  if (sig && SIGNAL_NUMBERS[sig] !== undefined) {
    return { code: 128 + SIGNAL_NUMBERS[sig], signal: sig as Deno.Signal };
  }
  return { code: 1, signal: null };
}

/** Options of {@link clientTerminalBackend}. */
export interface ClientTerminalOptions {
  /** The connection to the client. */
  client: acp.AgentContext;
  /** The ACP session. */
  sessionId: string;
  /** Show the terminal in the tool call (resolves once the client was told). */
  onTerminal: (toolCallId: string, terminalId: string) => Promise<void>;
}

/** Shell's foreground commands in client terminals (create → wait/timeout → output → release). */
export function clientTerminalBackend(opts: ClientTerminalOptions): TerminalBackend {
  const { client, sessionId } = opts;
  return {
    async start(run: TerminalRunOptions): Promise<TerminalRun> {
      run.signal.throwIfAborted();
      let handle: acp.TerminalHandle;
      try {
        // The client starts the command in its own (the editor's) environment plus `env`:
        // `env -i` makes it exactly the cleaned environment local Shell commands get.
        handle = await client.createTerminal({
          sessionId,
          command: "env",
          args: [
            "-i",
            ...Object.entries(run.env).map(([name, value]) => `${name}=${value}`),
            ...run.argv,
          ],
          cwd: run.cwd,
          outputByteLimit: TERMINAL_OUTPUT_LIMIT,
        });
      } catch (err) {
        throw clientFailure("create a terminal", err);
      }
      const done = (async (): Promise<ShellOutcome> => {
        type Stop = { kind: "timeout" } | { kind: "terminated"; reason: unknown };
        let stop: Stop | null = null;
        const stopped = Promise.withResolvers<void>();
        const timer = setTimeout(() => {
          stop ??= { kind: "timeout" };
          stopped.resolve();
        }, run.timeoutMs);
        const onAbort = () => {
          stop ??= { kind: "terminated", reason: run.signal.reason };
          stopped.resolve();
        };
        run.signal.addEventListener("abort", onAbort, { once: true });
        try {
          await opts.onTerminal(run.toolCallId, handle.id).catch(() => {});
          const exited = await Promise.race([
            handle.waitForExit().then((r) => r, () => null),
            stopped.promise.then(() => null),
          ]);
          if (stop) await handle.kill().catch(() => {});
          const out = await handle.currentOutput().catch(() => null);
          if (out?.output) run.onData(new TextEncoder().encode(out.output), "stdout");
          const status = exitStatus(exited ?? out?.exitStatus ?? {});
          const s = stop as Stop | null;
          return s ? { ...s, ...status } : { kind: "exited", ...status };
        } finally {
          clearTimeout(timer);
          run.signal.removeEventListener("abort", onAbort);
          await handle.release().catch(() => {});
        }
      })();
      return { done };
    },
  };
}
