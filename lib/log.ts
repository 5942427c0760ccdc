/**
 * The log file `<share>/logs/kimi.log`. Lines look like
 * `2026-01-02 03:04:05.678 | INFO | module - <session id> - message`. Logging never throws and
 * never receives secrets.
 *
 * The log file and level belong to the process (one `kimi.log`, one `--debug`); the session id
 * a line is tagged with belongs to the work being done: it is carried by the async context
 * ({@link withLogSession}), so the sessions of one process (`kimi acp`) each tag their own lines.
 *
 * @module
 */
import type { AsyncLocalStorage } from "node:async_hooks";

/** Log levels, lowest first. */
export type LogLevel = "TRACE" | "DEBUG" | "INFO" | "WARNING" | "ERROR";
const ORDER: Record<LogLevel, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARNING: 3, ERROR: 4 };

let logFile: string | null = null;
let minLevel: LogLevel = "INFO";
/**
 * The session id of the work running in each async context (holds no value itself). Made by the
 * first {@link withLogSession}: loading `node:async_hooks` starts Node's compatibility layer,
 * which `kimi --help` and other runs without a session need not pay for.
 */
let sessionContext: AsyncLocalStorage<string> | undefined;
const encoder = new TextEncoder();

/** Start logging to `<shareDir>/logs/kimi.log`; `debug` lowers the level to TRACE. */
export function configureLog(opts: { shareDir: string; debug: boolean }): string | null {
  minLevel = opts.debug ? "TRACE" : "INFO";
  const dir = `${opts.shareDir}/logs`;
  try {
    Deno.mkdirSync(dir, { recursive: true });
    logFile = `${dir}/kimi.log`;
  } catch {
    logFile = null;
  }
  return logFile;
}

/**
 * Run `fn` with the lines it logs (and those of the async work it starts) tagged with the
 * session id `id`.
 */
export function withLogSession<T>(id: string, fn: () => T): T {
  sessionContext ??= new (globalThis.process.getBuiltinModule("node:async_hooks")
    .AsyncLocalStorage)<string>();
  return sessionContext.run(id, fn);
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, "0");
}

/** Write one log line. */
export function log(level: LogLevel, module: string, message: string): void {
  if (!logFile || ORDER[level] < ORDER[minLevel]) return;
  const d = new Date();
  const ts = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${
    pad(d.getHours())
  }:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  try {
    Deno.writeFileSync(
      logFile,
      encoder.encode(
        `${ts} | ${level} | ${module} | ${sessionContext?.getStore() ?? ""} - ${message}\n`,
      ),
      { append: true },
    );
  } catch {
    // the log is best effort
  }
}
