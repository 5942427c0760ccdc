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

/** What the shell knows about the call behind an approval, for showing it. */
export interface ApprovalContext {
  /** The tool call's arguments (JSON text), when known. */
  args?: string;
  /** The MCP server whose tool asks (for `mcp:<tool>` actions). */
  mcpServer?: string;
  /** Interrupt the turn (Ctrl-C at the approval). */
  interrupt?: () => void;
}

/** The lines that show an approval request: what asks, and the command, diff or arguments once. */
export function approvalLines(
  p: PendingRequest<"ApprovalRequest">["payload"],
  ctx: ApprovalContext = {},
  full = false,
): string[] {
  const who = p.subagent_type ? ` (subagent ${p.subagent_type})` : "";
  const mcpTool = p.action.startsWith("mcp:") ? p.action.slice(4) : null;
  if (mcpTool !== null) {
    const server = ctx.mcpServer ? ` from MCP server ${style.accent(ctx.mcpServer)}` : "";
    const lines = [
      style.warn(`⚠ ${p.sender}${who} wants to call tool `) +
      style.accent(mcpTool) + server + style.warn(":"),
    ];
    lines.push(...formatArgs(ctx.args, full));
    return lines;
  }
  const lines = [style.warn(`⚠ ${p.sender}${who} wants to ${p.action}:`)];
  // the command or diff is shown once: the description only when no block shows it
  const shown = p.display.some((b) => b.type === "shell" || b.type === "diff");
  if (p.description && !shown) lines.push(`  ${p.description}`);
  // only the changed lines: the file's surroundings are not what is being approved
  lines.push(...p.display.flatMap((b) => formatBlock(b, 0, { full })));
  return lines;
}

const MAX_ARG_LINES = 12;

function formatArgs(args: string | undefined, full = false): string[] {
  if (args === undefined) return [];
  let text = args;
  try {
    const v = JSON.parse(args || "{}");
    text = Object.keys(v ?? {}).length === 0 ? "(no arguments)" : JSON.stringify(v, null, 2);
  } catch {
    // show the raw text
  }
  const lines = text.split("\n");
  if (full) return lines.map((l) => `  ${l}`);
  const out = lines.slice(0, MAX_ARG_LINES).map((l) => `  ${l}`);
  if (lines.length > MAX_ARG_LINES) {
    out.push(style.dim(`  … (${lines.length - MAX_ARG_LINES} more lines)`));
  }
  return out;
}

/** The keys of an approval: Esc rejects the call, Ctrl-C interrupts the whole turn. */
export const APPROVAL_KEYS_HINT =
  "↑/↓ move · Enter select · Esc reject · Ctrl-C reject and interrupt the turn";

/** Ask the user about an approval request; prints the request and the outcome. */
export async function promptApproval(
  term: Terminal,
  req: PendingRequest<"ApprovalRequest">,
  ctx: ApprovalContext = {},
): Promise<RequestResult<"ApprovalRequest">> {
  const p = req.payload;
  const shown = approvalLines(p, ctx);
  term.print(shown.join("\n"));
  // a preview cut short (a long diff or arguments) can be shown whole with Ctrl-E
  let rest: string[] | null = approvalLines(p, ctx, true);
  if (rest.length === shown.length) rest = null;
  const id = p.id;
  const choices = approvalChoices(p);
  const what = describeGrant(p.grant_patterns);
  while (true) {
    let interrupted = false;
    const choice = await select(term, {
      title: [style.bold("Allow this action?")],
      options: [...choices.map((c) => ({ label: c.label })), { label: REJECT_WITH_FEEDBACK_LABEL }],
      onInterrupt: () => (interrupted = true),
      keysHint: rest ? `${APPROVAL_KEYS_HINT} · Ctrl-E show all` : APPROVAL_KEYS_HINT,
      onKey: (key) => {
        if (key.name !== "ctrl-e" || rest === null) return false;
        term.print(rest.join("\n"));
        return true;
      },
    });
    if (interrupted) {
      term.print(style.warn("  ✗ Interrupted"));
      ctx.interrupt?.();
      return { request_id: id, response: "reject", feedback: "" };
    }
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
