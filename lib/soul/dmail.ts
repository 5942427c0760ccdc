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
  send(checkpointId: number, message: string): string | null {
    if (this.#pending) return "Only one D-Mail can be sent at a time";
    if (checkpointId < 0) return "The checkpoint ID can not be negative";
    if (checkpointId >= this.#nCheckpoints()) return "There is no checkpoint with the given ID";
    this.#pending = { checkpointId, message };
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
