/**
 * The text of a fatal error of a run, as the reference prints it on stderr before exiting 1:
 * the error, where the log is, and how to get more.
 *
 * @module
 */

/**
 * `<error>\nSee logs: <share>/logs/kimi.log\nRun with --debug ...` (`shareDir` null: `~/.kimi`).
 * With `--debug` (`traceback` given) the traceback it promises follows instead of the hint (it
 * is written to the log as well).
 */
export function fatalErrorText(
  message: string,
  shareDir: string | null,
  traceback: string | null = null,
): string {
  const logPath = `${shareDir ?? "~/.kimi"}/logs/kimi.log`;
  if (traceback !== null) {
    return `${message.trimEnd()}\nSee logs: ${logPath}\nTraceback:\n${traceback.trimEnd()}`;
  }
  return `${message.trimEnd()}\nSee logs: ${logPath}\n` +
    "Run with --debug for full traceback, or run kimi export to share diagnostics.";
}
