/**
 * Vendor SDKs print notices (deprecations, credential precedence) straight to the console while
 * they build clients and requests. Those lines would land in the shell's screen or on the wire's
 * stdout, so they are sent to the log file instead.
 *
 * @module
 */
import { log } from "../../log.ts";

/**
 * Run the synchronous `fn` with `console.warn`, `console.info`, `console.debug` and
 * `console.log` writing to the log (module `source`). Only synchronous console calls are caught;
 * the console is restored before this returns.
 */
export function withSdkConsole<T>(source: string, fn: () => T): T {
  const saved = {
    warn: console.warn,
    info: console.info,
    debug: console.debug,
    log: console.log,
  };
  const toLog = (...args: unknown[]) => log("WARNING", source, args.map(String).join(" "));
  console.warn = toLog;
  console.info = toLog;
  console.debug = toLog;
  console.log = toLog;
  try {
    return fn();
  } finally {
    Object.assign(console, saved);
  }
}
