/**
 * Answering the soul's requests at the terminal: approvals (approve once / the derived command
 * prefix for the session / save it as a rule / reject / reject with feedback) and AskUserQuestion questions (with an "other" answer).
 *
 * @module
 */
import { approvalChoices, describeGrant } from "../../wire/approval_options.ts";
import type { PendingRequest, RequestResult } from "../../wire/messages.ts";
import { formatBlock } from "./display_blocks.ts";
import type { Terminal } from "./terminal.ts";
import { style } from "./theme.ts";
import { select, textInput } from "./widgets.ts";

/** The last choice of an approval: reject and tell the model what to do instead. */
export const REJECT_WITH_FEEDBACK_LABEL = "Reject, and tell the model what to do instead";

/** Ask the user about an approval request; prints the request and the outcome. */
export async function promptApproval(
  term: Terminal,
  req: PendingRequest<"ApprovalRequest">,
): Promise<RequestResult<"ApprovalRequest">> {
  const p = req.payload;
  const who = p.subagent_type ? ` (subagent ${p.subagent_type})` : "";
  const lines = [style.warn(`⚠ ${p.sender}${who} wants to ${p.action}:`)];
  if (p.description) lines.push(`  ${p.description}`);
  lines.push(...p.display.flatMap((b) => formatBlock(b)));
  term.print(lines.join("\n"));
  const id = p.id;
  const choices = approvalChoices(p);
  const what = describeGrant(p.grant_patterns);
  while (true) {
    const choice = await select(term, {
      title: [style.bold("Allow this action?")],
      options: [...choices.map((c) => ({ label: c.label })), { label: REJECT_WITH_FEEDBACK_LABEL }],
    });
    if (req.settled) return { request_id: id, response: "reject", feedback: "" };
    const picked = choice === null ? choices.find((c) => c.id === "reject")! : choices[choice[0]];
    if (picked) {
      switch (picked.id) {
        case "approve":
          term.print(style.ok("  ✓ Approved"));
          break;
        case "approve_for_session":
          term.print(style.ok(`  ✓ Approved ${what} for this session`));
          break;
        case "approve_always":
          term.print(style.ok(`  ✓ Approved ${what}; saving the rule to ${p.rule_file}`));
          break;
        case "reject":
          term.print(style.error("  ✗ Rejected"));
      }
      return { request_id: id, response: picked.id, feedback: "" };
    }
    const feedback = await textInput(term, {
      title: [style.bold("What should the model do instead?")],
      label: "› ",
    });
    if (feedback === null) continue;
    term.print(style.error(`  ✗ Rejected: ${feedback}`));
    return { request_id: id, response: "reject", feedback };
  }
}

/** Ask the questions of a QuestionRequest one by one; Escape dismisses (empty answers). */
export async function promptQuestions(
  term: Terminal,
  req: PendingRequest<"QuestionRequest">,
): Promise<RequestResult<"QuestionRequest">> {
  const answers: Record<string, string> = {};
  for (const q of req.payload.questions) {
    const title: string[] = [];
    if (q.header) title.push(style.dim(q.header));
    title.push(style.bold(q.question));
    if (q.body) title.push(q.body);
    const otherLabel = q.other_label || "Other";
    const options = [
      ...q.options.map((o) => ({ label: o.label, hint: o.description })),
      { label: otherLabel, hint: q.other_description || "type your own answer" },
    ];
    const picked = await select(term, { title, options, multiple: q.multi_select });
    if (picked === null) {
      term.print(style.dim("  Question dismissed."));
      return { request_id: req.payload.id, answers: {} };
    }
    const labels: string[] = [];
    for (const i of picked) {
      if (i < q.options.length) {
        labels.push(q.options[i].label);
        continue;
      }
      const text = await textInput(term, { title: [style.bold(q.question)], label: "› " });
      if (text === null) return { request_id: req.payload.id, answers: {} };
      labels.push(text);
    }
    answers[q.question] = labels.join(", ");
    term.print(`${style.bold(q.question)} ${style.accent(answers[q.question])}`);
  }
  return { request_id: req.payload.id, answers };
}
