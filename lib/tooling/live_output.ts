/**
 * Output lines of running tool calls, for a UI that shows them live (the shell draws the last
 * lines of a running Shell command under its tool line). One feed per session, so a UI sees
 * its own session's calls only. In-process only: nothing here reaches the wire or the session
 * files, and publishing with no listener costs nothing.
 *
 * @module
 */

/** Receives one output line of a running tool call. */
export type ToolOutputListener = (toolCallId: string, line: string) => void;

/** The live output of one session's running tool calls. */
export class ToolOutputFeed {
  readonly #listeners = new Set<ToolOutputListener>();

  /** Publish a line a running tool call produced. */
  publish(toolCallId: string, line: string): void {
    for (const l of this.#listeners) l(toolCallId, line);
  }

  /** Listen to running tool calls' output; call the returned function to stop. */
  subscribe(listener: ToolOutputListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
