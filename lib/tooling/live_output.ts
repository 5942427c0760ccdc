/**
 * Output lines of running tool calls, for a UI that shows them live (the shell draws the last
 * lines of a running Shell command under its tool line). In-process only: nothing here reaches
 * the wire or the session files, and publishing with no listener costs nothing.
 *
 * @module
 */

/** Receives one output line of a running tool call. */
export type ToolOutputListener = (toolCallId: string, line: string) => void;

const listeners = new Set<ToolOutputListener>();

/** Publish a line a running tool call produced. */
export function publishToolOutput(toolCallId: string, line: string): void {
  for (const l of listeners) l(toolCallId, line);
}

/** Listen to running tool calls' output; call the returned function to stop. */
export function subscribeToolOutput(listener: ToolOutputListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
