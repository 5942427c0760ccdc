/**
 * `/feedback`: signed in to Kimi Code, it asks for a line of feedback and sends it to the
 * platform (`POST <Kimi Code base URL>/feedback` with the login's access token, as the
 * reference does). Not signed in, or when sending fails, it says where to report a problem
 * with this build and writes a diagnostics export (versions, platform, model and MCP status,
 * the end of the log) to the share dir for attaching. Neither the export nor anything printed
 * holds API keys or tokens: configured secret values are scrubbed from the export.
 *
 * @module
 */
import { join } from "node:path";
import { atomicWriteText } from "../../../fs/atomic_write.ts";
import {
  KIMI_CODE_OAUTH_KEY,
  KIMI_CODE_PROVIDER_KEY,
  kimiCodeBaseUrl,
} from "../../../auth/kimi_code.ts";
import {
  type FeedbackOutcome,
  osDescription,
  submitFeedback,
} from "../../../auth/kimi_code_feedback.ts";
import { VERSION } from "../../../version.ts";
import type { ShellContext } from "../shell_context.ts";
import { style } from "../theme.ts";
import { textInput } from "../widgets.ts";
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

/** Print where to report a problem, with a freshly written diagnostics export. */
async function reportWhere(ctx: ShellContext): Promise<void> {
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
}

function safeEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The Kimi Code login `/feedback` sends with. */
interface KimiCodeLogin {
  /** Credentials key of the login. */
  key: string;
  /** The provider's custom headers. */
  headers: Record<string, string>;
}

/**
 * The login of the managed Kimi Code provider, or null when there is none: no managed
 * provider, or one configured with an API key rather than a sign-in. (A managed provider
 * without an `oauth` reference and without a key uses the stored login, as the model does.)
 */
function kimiCodeLogin(ctx: ShellContext): KimiCodeLogin | null {
  const provider = ctx.app.config.providers[KIMI_CODE_PROVIDER_KEY];
  if (!provider) return null;
  const key = provider.oauth?.key ?? (provider.api_key ? null : KIMI_CODE_OAUTH_KEY);
  if (!key) return null;
  return { key, headers: { ...(provider.custom_headers ?? {}) } };
}

/** The line printed for a submission that did not go through (null: nothing to add). */
export function failureLine(outcome: FeedbackOutcome): string | null {
  switch (outcome.kind) {
    case "submitted":
      return null;
    case "cancelled":
      return "Feedback cancelled.";
    case "timeout":
      return "Feedback submission timed out.";
    case "http":
      return `Failed to submit feedback (HTTP ${outcome.status}).`;
    case "network":
      return "Network error, failed to submit feedback." +
        (outcome.denied
          ? ` This run has no network access to ${outcome.denied}; restart kimi with ` +
            `--allow-net=${outcome.denied} (or \`deno task workspace\`) to send it from here.`
          : "");
  }
}

/** `/feedback`. */
export const feedbackCommand: ShellCommand = {
  name: "feedback",
  aliases: [],
  description: "Send feedback to Kimi Code (when signed in), else how to report a problem",
  async run(ctx) {
    const login = kimiCodeLogin(ctx);
    if (!login) return await reportWhere(ctx);
    const { tokenManagerFor } = await import("../../../auth/token_manager.ts");
    const tokens = tokenManagerFor(ctx.app.session.shareDir, safeEnv);
    if (!(await tokens.hasUsableLogin(login.key))) {
      ctx.print(style.dim(
        "You are not signed in to Kimi Code: /login signs in to send feedback " +
          "from here.",
      ));
      return await reportWhere(ctx);
    }

    const entered = await textInput(ctx.term, { title: [], label: "Enter your feedback: " });
    if (entered === null) {
      ctx.print(style.dim("Feedback cancelled."));
      return;
    }
    const content = entered.trim();
    if (!content) {
      ctx.print(style.warn("Feedback cannot be empty."));
      return;
    }
    ctx.print(style.dim(`Enter your feedback: ${content}`));

    const app = ctx.app;
    const abort = new AbortController();
    ctx.term.setHandler((key) => {
      if (key.name === "ctrl-c") abort.abort();
    });
    ctx.term.render([style.accent("Submitting feedback...")]);
    let outcome: FeedbackOutcome;
    try {
      outcome = await submitFeedback({
        baseUrl: kimiCodeBaseUrl(safeEnv),
        // current at the moment of sending: typing may have outlasted the token
        accessToken: await tokens.accessToken(login.key),
        refreshToken: () => tokens.refreshAfterUnauthorized(login.key),
        headers: login.headers,
        payload: {
          session_id: app.session.id,
          content,
          version: VERSION,
          os: osDescription(),
          model: app.llm?.modelAlias || null,
        },
        signal: abort.signal,
      });
    } finally {
      ctx.term.clearLive();
      ctx.term.setHandler(null);
    }
    const failed = failureLine(outcome);
    if (failed === null) {
      ctx.print(
        style.ok(`Feedback submitted, thank you! Your session ID is: ${app.session.id}`),
      );
      return;
    }
    if (outcome.kind === "cancelled") {
      ctx.print(style.dim(failed));
      return;
    }
    ctx.print(style.error(failed));
    await reportWhere(ctx);
  },
};
