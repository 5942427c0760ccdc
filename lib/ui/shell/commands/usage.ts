/**
 * `/usage` (`/status`): model, context use, the session's token totals (summed from the usage
 * each step recorded in `wire.jsonl`, so totals survive resuming), session facts and, when the
 * model is Kimi Code's, the account's quota (`GET <base>/usages`).
 *
 * @module
 */
import { readJsonlLines } from "../../../session/jsonl.ts";
import type { TokenUsage } from "../../../llm/message.ts";
import type { ShellContext } from "../shell_context.ts";
import type { ShellCommand } from "./command.ts";

/** Token totals of a session. */
export interface TokenTotals {
  /** Input tokens not read from the cache. */
  input: number;
  /** Input tokens read from the provider's cache. */
  cacheRead: number;
  /** Input tokens written to the provider's cache. */
  cacheCreation: number;
  /** Output tokens. */
  output: number;
  /** Steps that reported usage. */
  steps: number;
}

/** Sum the `StatusUpdate.token_usage` records of a `wire.jsonl` (missing file: zeros). */
export async function sessionTokenTotals(wireFile: string): Promise<TokenTotals> {
  const totals: TokenTotals = { input: 0, cacheRead: 0, cacheCreation: 0, output: 0, steps: 0 };
  try {
    for await (const line of readJsonlLines(wireFile)) {
      let record: { message?: { type?: unknown; payload?: { token_usage?: TokenUsage | null } } };
      try {
        record = JSON.parse(line);
      } catch {
        continue;
      }
      if (record?.message?.type !== "StatusUpdate") continue;
      const u = record.message.payload?.token_usage;
      if (!u || typeof u !== "object") continue;
      totals.input += num(u.input_other);
      totals.cacheRead += num(u.input_cache_read);
      totals.cacheCreation += num(u.input_cache_creation);
      totals.output += num(u.output);
      totals.steps++;
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return totals;
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Format a token count with thousands separators. */
function fmt(n: number): string {
  return n.toLocaleString("en-US");
}

/** The `/usage` text. */
export async function usageText(ctx: ShellContext): Promise<string> {
  const app = ctx.app;
  const llm = app.llm;
  const tokens = app.soul.context.tokenCount;
  const t = await sessionTokenTotals(app.session.wireFile);
  const input = t.input + t.cacheRead + t.cacheCreation;
  return [
    `Model:    ${llm ? `${llm.modelAlias || "-"} (${llm.provider.modelName})` : "not set"}`,
    `Context:  ${tokens} tokens` +
    (llm ? ` of ${llm.maxContextSize} (${((tokens / llm.maxContextSize) * 100).toFixed(1)}%)` : ""),
    `Tokens:   input ${fmt(input)} (cached ${fmt(t.cacheRead)}, cache writes ${
      fmt(t.cacheCreation)
    }) · output ${fmt(t.output)} · ${t.steps} step(s) with usage`,
    `Session:  ${app.session.id}`,
    `Work dir: ${app.session.workDir}`,
    `Flags:    yolo=${app.soul.approval.state.yolo} afk=${app.soul.approval.state.afk} plan=${app.soul.planMode}`,
  ].join("\n");
}

const KIMI_CODE_PROVIDER = "managed:kimi-code";
const KIMI_CODE_OAUTH_KEY = "oauth/kimi-code";

function safeEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The Kimi Code quota lines for the current model (signed in or with a Kimi Code key), or
 * null when the model is not Kimi Code's.
 */
export async function quotaText(ctx: ShellContext): Promise<string | null> {
  const app = ctx.app;
  const alias = app.llm?.modelAlias;
  const model = alias ? app.config.models[alias] : undefined;
  if (!model || model.provider !== KIMI_CODE_PROVIDER) return null;
  const provider = app.config.providers[model.provider];
  if (!provider) return null;
  const usage = await import("../../../auth/kimi_code_usage.ts");
  let token = provider.api_key;
  try {
    if (!token) {
      const { tokenManagerFor } = await import("../../../auth/token_manager.ts");
      token = await tokenManagerFor(app.session.shareDir, safeEnv)
        .accessToken(provider.oauth?.key ?? KIMI_CODE_OAUTH_KEY);
    }
    const res = await fetch(`${provider.base_url.replace(/\/+$/, "")}/usages`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return `Quota:    ${usage.quotaFetchError(res.status)}`;
    }
    const rows = usage.parseQuota(await res.json());
    if (rows.length === 0) return "Quota:    No usage data available.";
    return ["Quota:", ...usage.formatQuota(rows).map((l) => `  ${l}`)].join("\n");
  } catch (err) {
    // never the token: only what went wrong
    const msg = err instanceof Error ? err.message : String(err);
    const why = token ? msg.replaceAll(token, "***") : msg;
    return `Quota:    ${usage.quotaFetchError(null, why)}`;
  }
}

/** `/usage`. */
export const usageCommand: ShellCommand = {
  name: "usage",
  aliases: ["status"],
  description: "Show model, context and token usage of this session (and the Kimi Code quota)",
  async run(ctx) {
    ctx.print(await usageText(ctx));
    const quota = await quotaText(ctx);
    if (quota) ctx.print(quota);
  },
};
