/**
 * The choices an approval request offers, shared by every front end (shell, wire, ACP): approve
 * once, approve the derived rule patterns for the session, save them as rules, reject. Built
 * from the request's `grant_patterns` and `rule_file`.
 *
 * @module
 */
import type { ApprovalOption } from "./messages.ts";

/** How a choice is meant (ACP permission option kinds). */
export type ApprovalOptionKind = "allow_once" | "allow_session" | "allow_always" | "reject_once";

/** A choice with its kind. */
export interface ApprovalChoice extends ApprovalOption {
  /** How the choice is meant. */
  kind: ApprovalOptionKind;
}

/** A short human description of rule patterns, e.g. `` `git status` commands``. */
export function describeGrant(patterns: readonly string[]): string {
  return patterns.map((p) => {
    const shell = /^Shell\((.*)\)$/s.exec(p);
    if (shell) {
      const arg = shell[1];
      // `\*` in a pattern is a literal star of the approved command.
      const unescape = (t: string) => t.replace(/\\([\\*])/g, "$1");
      return arg.endsWith(" *") && !arg.endsWith("\\ *")
        ? `\`${unescape(arg.slice(0, -2))}\` commands`
        : `exactly \`${unescape(arg)}\``;
    }
    const edit = /^Edit\((.*)\)$/s.exec(p);
    if (edit) {
      const arg = edit[1];
      if (arg === "*") return "edits of files at the top of the work dir";
      if (arg.endsWith("/*")) return `edits of files in \`${arg.slice(0, -1)}\``;
      if (arg.endsWith("/**")) return `edits under \`${arg.slice(0, -2)}\``;
      return `edits of \`${arg}\``;
    }
    return `\`${p}\``;
  }).join(", ");
}

/** The choices of a request, in display order. */
export function approvalChoices(
  req: { grant_patterns?: readonly string[]; rule_file?: string | null },
): ApprovalChoice[] {
  const grant = req.grant_patterns ?? [];
  const out: ApprovalChoice[] = [{ id: "approve", label: "Approve once", kind: "allow_once" }];
  if (grant.length > 0) {
    const what = describeGrant(grant);
    out.push({
      id: "approve_for_session",
      label: `Approve ${what} for this session`,
      kind: "allow_session",
    });
    if (req.rule_file) {
      out.push({
        id: "approve_always",
        label: `Always approve ${what} (save rule to ${req.rule_file})`,
        kind: "allow_always",
      });
    }
  }
  out.push({ id: "reject", label: "Reject", kind: "reject_once" });
  return out;
}
