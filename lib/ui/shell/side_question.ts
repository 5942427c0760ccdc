/**
 * `/btw` typed while a turn runs: the side question is answered at once, beside the running
 * turn (which it neither waits for nor enters), instead of being queued until the turn ends.
 *
 * @module
 */
import { answerSideQuestion } from "../../soul/commands/btw.ts";
import { loadMarkdown } from "./markdown.ts";
import type { ShellContext } from "./shell_context.ts";
import { btwAnswerLines, btwQuestionLine } from "./side_lines.ts";

/** The question of a `/btw <question>` line, or null for any other line. */
export function sideQuestionOf(line: string): string | null {
  const m = /^\/btw\s+(\S[\s\S]*)$/.exec(line.trim());
  return m ? m[1].trim() : null;
}

/** Ask a side question now and print the answer when it comes. Never throws. */
export async function askBeside(
  ctx: Pick<ShellContext, "app" | "term" | "print">,
  question: string,
): Promise<void> {
  ctx.print(btwQuestionLine(question));
  try {
    const answer = await answerSideQuestion(ctx.app.soul, question);
    const md = await loadMarkdown();
    ctx.print(
      btwAnswerLines({ id: "", ...answer }, (t) => md(t, ctx.term.columns)),
    );
  } catch (err) {
    ctx.print(btwAnswerLines({ id: "", response: null, error: String(err) }, (t) => t));
  }
}
