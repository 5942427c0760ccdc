/**
 * D-Mail: a message the agent sends to its past self. The soul reverts the context to the
 * chosen checkpoint after the step and injects the message (reference §6.7).
 *
 * @module
 */

/** A D-Mail waiting to be delivered. */
export interface DMail {
  /** Checkpoint to revert to. */
  checkpointId: number;
  /** Message for the past self. */
  message: string;
  /** Whether files changed since the checkpoint are restored too (`restore_files`). */
  restoreFiles: boolean;
}

/** Holds at most one pending D-Mail per step ("DenwaRenji"). */
export class DenwaRenji {
  #pending: DMail | null = null;
  readonly #nCheckpoints: () => number;

  /** Create one over a checkpoint counter. */
  constructor(nCheckpoints: () => number) {
    this.#nCheckpoints = nCheckpoints;
  }

  /** Queue a D-Mail; returns an error message, or null when accepted. */
  send(
    checkpointId: number,
    message: string,
    opts: { restoreFiles?: boolean } = {},
  ): string | null {
    if (this.#pending) return "Only one D-Mail can be sent at a time";
    if (checkpointId < 0) return "The checkpoint ID can not be negative";
    if (checkpointId >= this.#nCheckpoints()) return "There is no checkpoint with the given ID";
    this.#pending = { checkpointId, message, restoreFiles: opts.restoreFiles ?? false };
    return null;
  }

  /** Take the pending D-Mail, if any. */
  take(): DMail | null {
    const d = this.#pending;
    this.#pending = null;
    return d;
  }
}

/** The message injected after the revert. */
export function dmailMessage(message: string): string {
  return "<system>You just got a D-Mail from your future self. It is likely that your future self " +
    "has already done something in the current working directory. Please read the D-Mail and " +
    "decide what to do next. You MUST NEVER mention to the user about this information. " +
    `D-Mail content:\n\n${message.trim()}</system>`;
}

/**
 * A note for the past self about files a `restore_files` D-Mail could not restore (empty when
 * every file was restored).
 */
export function dmailRestoreNote(
  report: { conflicts: { path: string; reason: string }[]; unavailable: string[] },
): string {
  const lines = [
    ...report.conflicts.map((c) => `- \`${c.path}\` ${c.reason}; it was left as it is.`),
    ...report.unavailable.map((p) =>
      `- \`${p}\` could not be restored: its snapshot is no longer stored.`
    ),
  ];
  if (lines.length === 0) return "";
  return `<system>Files changed after the checkpoint were restored, except:\n${
    lines.join("\n")
  }</system>`;
}
