/**
 * The log file `<share>/logs/kimi.log`. Lines look like
 * `2026-01-02 03:04:05.678 | INFO | module - <session id> - message`. Logging never throws and
 * never receives secrets.
 *
 * @module
 */

/** Log levels, lowest first. */
export type LogLevel = "TRACE" | "DEBUG" | "INFO" | "WARNING" | "ERROR";
const ORDER: Record<LogLevel, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARNING: 3, ERROR: 4 };

let logFile: string | null = null;
let minLevel: LogLevel = "INFO";
let sessionId = "";
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

/** Tag further lines with a session id. */
export function setLogSession(id: string): void {
  sessionId = id;
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
      encoder.encode(`${ts} | ${level} | ${module} | ${sessionId} - ${message}\n`),
      { append: true },
    );
  } catch {
    // the log is best effort
  }
}
