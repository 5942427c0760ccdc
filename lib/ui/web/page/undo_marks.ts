/**
 * Which turns of the chat an `/undo` took back, and which turn the Undo action would take back
 * next. The wire log keeps every turn (it is append-only); a `/undo [n]` turn whose answer says
 * it undid turns marks the `n` latest turns before it that were still in the conversation.
 * A slash command is a turn of the conversation only when the agent loop ran in it (a skill,
 * a flow); one that only answered (`/undo`, `/export`) is not.
 *
 * @module
 */

/** What the marks need of a turn. */
export interface UndoTurnView {
  /** Index of the turn. */
  index: number;
  /** What the user sent. */
  userText: string;
  /** Whether the turn has ended. */
  ended: boolean;
  /** Text the assistant side said (joined). */
  answer: string;
  /** Steps of the agent loop in the turn. */
  steps?: number;
}

/** The result of {@link undoMarks}. */
export interface UndoMarks {
  /** Indexes of the turns taken back. */
  undone: Set<number>;
  /** The turn the Undo action takes back (the latest turn still in the conversation), if any. */
  target: number | null;
}

const UNDO_COMMAND = /^\/undo(?:\s+(\d+))?\s*$/;

/** Whether a user message is a slash command (the soul's rule: `/name[:sub] [args]`). */
export function isSlashCommand(text: string): boolean {
  return /^\/[A-Za-z0-9_-]+(?::[A-Za-z0-9_-]+)*(?:\s[\s\S]*)?$/.test(text.trim());
}

/** The undone turns and the next Undo target of `turns` (oldest first). */
export function undoMarks(turns: readonly UndoTurnView[]): UndoMarks {
  const undone = new Set<number>();
  const live: number[] = [];
  for (const t of turns) {
    const m = UNDO_COMMAND.exec(t.userText.trim());
    if (m) {
      if (!t.ended || !/^Undid the last (turn|\d+ turns)\./m.test(t.answer)) continue;
      const n = m[1] ? Number(m[1]) : 1;
      for (let k = 0; k < n && live.length > 0; k++) undone.add(live.pop()!);
      continue;
    }
    if (isSlashCommand(t.userText) && !(t.steps ?? 0)) continue;
    live.push(t.index);
  }
  const target = live.length > 0 ? live[live.length - 1] : null;
  return { undone, target };
}
