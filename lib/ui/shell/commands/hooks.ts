/**
 * `/hooks`: the configured `[[hooks]]` commands and the wire client's subscriptions, each with
 * its last result in this session.
 *
 * @module
 */
import type { HookListing } from "../../../hooks/engine.ts";
import { style } from "../theme.ts";
import type { ShellCommand } from "./command.ts";

function lastRun(h: HookListing): string {
  const l = h.last;
  if (!l) return "not run yet";
  const when = new Date(l.at).toLocaleTimeString("en-GB", { hour12: false });
  const outcome = l.timedOut
    ? "timed out (allowed)"
    : l.action === "block"
    ? `blocked${l.reason ? `: ${l.reason}` : ""}`
    : `allowed${l.exitCode !== 0 ? ` (exit ${l.exitCode})` : ""}`;
  return `last run ${when}: ${outcome} in ${l.durationMs} ms`;
}

/** The `/hooks` text for a list of hooks. */
export function hooksText(hooks: readonly HookListing[]): string {
  if (hooks.length === 0) {
    return "No hooks are configured. Add [[hooks]] entries (event, command, matcher, timeout) " +
      "to config.toml; wire clients subscribe in initialize.";
  }
  const lines = [style.bold(`Hooks (${hooks.length})`)];
  for (const h of hooks) {
    const matcher = h.matcher ? ` /${h.matcher}/` : "";
    const what = h.source === "config" ? `$ ${h.target}` : `wire subscriber ${h.target}`;
    lines.push(`  ${h.event}${matcher} → ${what} (timeout ${h.timeout}s)`);
    lines.push(style.dim(`    ${lastRun(h)}`));
  }
  return lines.join("\n");
}

/** `/hooks`. */
export const hooksCommand: ShellCommand = {
  name: "hooks",
  aliases: [],
  description: "List configured hooks and wire subscribers with their last result",
  run(ctx) {
    ctx.print(hooksText(ctx.app.hooks.list()));
    return Promise.resolve();
  },
};
