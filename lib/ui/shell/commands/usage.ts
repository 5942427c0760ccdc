/**
 * `/usage` (`/status`): model, context use, the session's token totals (summed from the usage
 * each step recorded in `wire.jsonl`, so totals survive resuming) and session facts.
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

/** `/usage`. */
export const usageCommand: ShellCommand = {
  name: "usage",
  aliases: ["status"],
  description: "Show model, context and token usage of this session",
  async run(ctx) {
    ctx.print(await usageText(ctx));
  },
};
