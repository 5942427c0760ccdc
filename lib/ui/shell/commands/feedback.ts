/**
 * `/feedback`: where and how to report a problem, plus a diagnostics export (versions,
 * platform, model and MCP status, the end of the log) written to the share dir for attaching.
 * The export never holds API keys or tokens: configured secret values are scrubbed from it.
 *
 * @module
 */
import { join } from "node:path";
import { atomicWriteText } from "../../../fs/atomic_write.ts";
import { VERSION } from "../../../version.ts";
import type { ShellContext } from "../shell_context.ts";
import { style } from "../theme.ts";
import type { ShellCommand } from "./command.ts";

/**
 * Where problems with this build are reported: to its own maintainers, never to the upstream
 * Python project's tracker (which does not know this program).
 */
export const FEEDBACK_WHERE = "Report problems with this build (kimi for Deno, a TypeScript " +
  "re-implementation, not the Python Kimi Code CLI) to the people you got it from, not to the " +
  "Python project's issue tracker.";

/** Log lines included in the export. */
const LOG_LINES = 200;

async function logTail(shareDir: string): Promise<string> {
  try {
    const text = await Deno.readTextFile(join(shareDir, "logs", "kimi.log"));
    return text.replace(/\n+$/, "").split("\n").slice(-LOG_LINES).join("\n");
  } catch {
    return "[no log file]";
  }
}

/** The diagnostics text of the running shell (secrets scrubbed). */
export async function diagnostics(ctx: ShellContext): Promise<string> {
  const app = ctx.app;
  const llm = app.llm;
  const mcp = app.mcp?.status() ?? ctx.mcpStatus;
  const hooks = app.hooks.list();
  const lines = [
    `# kimi diagnostics`,
    "",
    `- kimi: ${VERSION}`,
    `- deno: ${Deno.version.deno} (v8 ${Deno.version.v8}, typescript ${Deno.version.typescript})`,
    `- platform: ${Deno.build.os} ${Deno.build.arch}`,
    `- terminal: ${ctx.term.columns}x${ctx.term.rows}`,
    `- created: ${new Date().toISOString()}`,
    `- session: ${app.session.id}`,
    `- work dir: ${app.session.workDir}`,
    `- model: ${
      llm ? `${llm.modelAlias || "-"} (${llm.provider.name}: ${llm.provider.modelName})` : "not set"
    }`,
    `- capabilities: ${llm ? [...llm.capabilities].join(", ") || "none" : "-"}`,
    `- agent: ${app.agent.name || "default"}; tools: ${app.soul.toolset.names().join(", ")}`,
    `- modes: yolo=${app.soul.approval.state.yolo} afk=${app.soul.approval.state.afk} plan=${app.soul.planMode}`,
    `- mcp: ${
      mcp && mcp.total > 0 ? mcp.servers.map((s) => `${s.name} (${s.status})`).join(", ") : "none"
    }`,
    `- hooks: ${hooks.length}`,
    `- context: ${app.soul.context.history.length} messages, ${app.soul.context.tokenCount} tokens`,
    "",
    "## Log (last lines)",
    "",
    "```",
    await logTail(app.session.shareDir),
    "```",
    "",
  ];
  return scrub(lines.join("\n"), secretValues(ctx));
}

function secretValues(ctx: ShellContext): string[] {
  const c = ctx.app.config;
  const out = [
    ...Object.values(c.providers).flatMap((p) => [p.api_key, ...Object.values(p.env ?? {})]),
    c.services.moonshot_search?.api_key ?? "",
    c.services.moonshot_fetch?.api_key ?? "",
  ];
  return out.filter((v): v is string => typeof v === "string" && v.length >= 6);
}

function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.replaceAll(s, "[redacted]");
  return out;
}

/** `/feedback`. */
export const feedbackCommand: ShellCommand = {
  name: "feedback",
  aliases: [],
  description: "How to report a problem, with a diagnostics export to attach",
  async run(ctx) {
    const dir = join(ctx.app.session.shareDir, "feedback");
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const file = join(dir, `kimi-diagnostics-${ctx.app.session.id.slice(0, 8)}-${stamp}.md`);
    let saved = "";
    try {
      await Deno.mkdir(dir, { recursive: true });
      await atomicWriteText(file, await diagnostics(ctx));
      saved = `Diagnostics saved to ${file} (no API keys; review it before sharing).`;
    } catch (err) {
      saved = `Could not write the diagnostics file (${(err as Error).message}); ` +
        "include the output of `kimi info` instead.";
    }
    ctx.print(
      [
        style.bold("Send feedback"),
        `  ${FEEDBACK_WHERE}`,
        "  Say what you did, what you expected and what happened; attach the file below.",
        `  ${saved}`,
        `  To share a conversation too: /export writes it as Markdown.`,
      ].join("\n"),
    );
  },
};
