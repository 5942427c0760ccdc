/**
 * `/permissions`: list the approval rules in force (numbered, with their source file and line,
 * session grants last), add a rule to the user's config (or an ask/deny rule to the project's
 * `.kimi/config.toml` with `--project`), remove a rule or revoke a session grant by number.
 *
 * @module
 */
import type { ApprovalRuntime } from "../../soul/approval.ts";
import {
  parseRulePattern,
  RULE_DECISIONS,
  type RuleDecision,
  ruleLocation,
} from "../../permission/rules.ts";

/** Usage line of the command. */
export const PERMISSIONS_USAGE =
  "Usage: /permissions · /permissions add allow|ask|deny <pattern> " +
  "[--project] · /permissions remove <n>";

/** The listing of the rules in force. */
export function formatPermissions(approval: ApprovalRuntime): string {
  const rules = approval.effectiveRules();
  const lines: string[] = [];
  if (rules.length === 0) {
    lines.push("No approval rules. Every action asks (unless yolo or afk is on).");
  } else {
    lines.push("Approval rules (deny wins over ask, ask over allow):");
    const width = Math.max(...rules.map((r) => r.pattern.length));
    rules.forEach((r, i) => {
      const where = r.scope === "session" ? "this session" : ruleLocation(r);
      lines.push(
        `  ${String(i + 1).padStart(2)}. ${r.decision.padEnd(5)}  ${
          r.pattern.padEnd(width)
        }  ${where}`,
      );
    });
  }
  for (const p of approval.rules.problems) {
    lines.push(`  ! ${ruleLocation(p)}: ${p.message}`);
  }
  if (approval.state.autoApprove) {
    lines.push("Note: yolo/afk is on, so everything not denied is approved without asking.");
  }
  lines.push(PERMISSIONS_USAGE);
  return lines.join("\n");
}

/** Run `/permissions <args>`; returns the text to print. */
export async function runPermissionsCommand(
  approval: ApprovalRuntime,
  args: string,
): Promise<string> {
  const [verb, ...rest] = args.trim().split(/\s+/).filter(Boolean);
  if (!verb || verb === "list") return formatPermissions(approval);
  if (verb === "add") {
    const decision = rest[0] as RuleDecision | undefined;
    if (!decision) return PERMISSIONS_USAGE;
    if (!RULE_DECISIONS.includes(decision)) {
      return `Unknown decision "${decision}": use ${RULE_DECISIONS.join(", ")}.\n` +
        PERMISSIONS_USAGE;
    }
    const project = rest.includes("--project");
    const pattern = rest.slice(1).filter((w) => w !== "--project").join(" ")
      .replace(/^(["'])(.*)\1$/s, "$2");
    const parsed = parseRulePattern(pattern);
    if (typeof parsed === "string") return `Not added: ${parsed}.`;
    try {
      if (project) {
        if (decision === "allow") {
          return "Not added: project rules may only ask or deny (a repository cannot grant " +
            "itself permissions). Add allow rules to your own config without --project.";
        }
        await approval.rules.saveProject([{ pattern, decision }]);
        return `Added ${decision} ${pattern} to ${approval.rules.projectFile}.`;
      }
      if (approval.rules.userFile === null) {
        return "Not added: the configuration came from --config text, so there is no file to " +
          "save rules to.";
      }
      await approval.rules.save([{ pattern, decision }]);
      return `Added ${decision} ${pattern} to ${approval.rules.userFile}.`;
    } catch (err) {
      return `Not added: ${err instanceof Error ? err.message : err}`;
    }
  }
  if (verb === "remove" || verb === "rm") {
    const n = Number(rest[0]);
    const rules = approval.effectiveRules();
    if (!Number.isInteger(n) || n < 1 || n > rules.length) {
      return `Give the number of a rule from the list (1-${rules.length}). ${PERMISSIONS_USAGE}`;
    }
    const rule = rules[n - 1];
    if (rule.scope === "session") {
      await approval.state.revoke(rule.pattern);
      return `Revoked the session grant ${rule.pattern}.`;
    }
    try {
      const ok = await approval.rules.remove(rule);
      return ok
        ? `Removed ${rule.decision} ${rule.pattern} from ${rule.source}.`
        : `Not removed: ${rule.source} changed since it was read; run /permissions again.`;
    } catch (err) {
      return `Not removed: ${err instanceof Error ? err.message : err}`;
    }
  }
  return `Unknown subcommand "${verb}".\n${PERMISSIONS_USAGE}`;
}
