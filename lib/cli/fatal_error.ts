/**
 * The text of a fatal error of a run, as the reference prints it on stderr before exiting 1:
 * the error, where the log is, and how to get more.
 *
 * @module
 */

/** `<error>\nSee logs: <share>/logs/kimi.log\nRun with --debug ...` (`shareDir` null: `~/.kimi`). */
export function fatalErrorText(message: string, shareDir: string | null): string {
  const logPath = `${shareDir ?? "~/.kimi"}/logs/kimi.log`;
  return `${message.trimEnd()}\nSee logs: ${logPath}\n` +
    "Run with --debug for full traceback, or run kimi export to share diagnostics.";
}
