/**
 * SearchWeb: query the `moonshot_search` service (offered only when it is configured).
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { toolError, ToolResultBuilder } from "../lib/tooling/result.ts";
import type {
  Tool,
  ToolEnv,
  ToolFactory,
  ToolReturnValue,
  WebServiceConfig,
} from "../lib/tooling/tool.ts";
import {
  describeError,
  hostOf,
  isTimeoutError,
  serviceConfigured,
  serviceHeaders,
  withTimeout,
} from "../lib/web/service_request.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Seconds the service may spend crawling (sent in the request). */
export const SERVICE_TIMEOUT_S = 30;
/** How long we wait for the service to answer. */
export const SEARCH_TIMEOUT_MS = 60_000;

/** SearchWeb parameters. */
export const searchWebParamsSchema = lazyValue(() =>
  z.object({
    query: z.string().describe("What to search for."),
    limit: z.number().int().min(1).max(20).default(5).describe(
      "How many results to return. The default is usually enough; sharpen the query " +
        "rather than raising it when results miss.",
    ),
    include_content: z.boolean().default(false).describe(
      "Also return the text of each result page. This can use many tokens; avoid it " +
        "together with a large limit.",
    ),
  })
);
/** SearchWeb parameters. */
export type SearchWebParams = z.infer<ReturnType<typeof searchWebParamsSchema>>;

/** One result as the service returns it. */
export const searchResultSchema = lazyValue(() =>
  z.object({
    site_name: z.string(),
    title: z.string(),
    url: z.string(),
    snippet: z.string(),
    content: z.string().default(""),
    date: z.string().default(""),
    icon: z.string().default(""),
    mime: z.string().default(""),
  })
);
/** The service's response. */
export const searchResponseSchema = lazyValue(() =>
  z.object({ search_results: z.array(searchResultSchema()) })
);

function unavailable(builder: ToolResultBuilder, detail: string, brief: string): ToolReturnValue {
  return builder.error(
    `${detail}. This may indicate that the search service is currently unavailable.`,
    { brief },
  );
}

function searchWeb(env: ToolEnv, service: WebServiceConfig): Tool<SearchWebParams> {
  return {
    name: "SearchWeb",
    description: readAsset("tools/search_web.md"),
    get parameters() {
      return searchWebParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.SearchWeb,
    resolve: (params) => ({
      execute: async (ctx) => {
        const builder = new ToolResultBuilder({ maxLineChars: null });
        if (!serviceConfigured(service)) {
          return builder.error(
            "Search service is not configured. You may want to try other methods to search.",
            { brief: "Search service not configured" },
          );
        }
        const host = hostOf(service.baseUrl);
        const decision = env.scope.check("net", host ?? service.baseUrl);
        if (!decision.allowed) {
          return toolError({ message: decision.message, brief: "Sandbox denied" });
        }

        let data: unknown;
        try {
          const resp = await fetch(service.baseUrl, {
            method: "POST",
            headers: {
              ...(await serviceHeaders(service, ctx.toolCallId)),
              "Content-Type": "application/json",
            },
            body: JSON.stringify({
              text_query: params.query,
              limit: params.limit,
              enable_page_crawling: params.include_content,
              timeout_seconds: SERVICE_TIMEOUT_S,
            }),
            signal: withTimeout(ctx.signal, SEARCH_TIMEOUT_MS),
          });
          if (resp.status !== 200) {
            await resp.body?.cancel();
            return unavailable(
              builder,
              `Failed to search. Status: ${resp.status}`,
              "Failed to search",
            );
          }
          const body = await resp.text();
          try {
            data = JSON.parse(body);
          } catch (e) {
            return unavailable(
              builder,
              `Failed to parse search results. Error: ${describeError(e)}`,
              "Failed to parse search results",
            );
          }
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          if (isTimeoutError(e, ctx.signal)) {
            return builder.error(
              `Failed to search: the search service did not answer within ${
                SEARCH_TIMEOUT_MS / 1000
              } seconds. Try again, or use other methods to search.`,
              { brief: "Search timed out" },
            );
          }
          return builder.error(
            `Failed to search due to network error: ${describeError(e)}. ` +
              "This may indicate the search service is unreachable.",
            { brief: "Network error" },
          );
        }

        const parsed = searchResponseSchema().safeParse(data);
        if (!parsed.success) {
          const detail = parsed.error.issues
            .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
            .join("; ");
          return unavailable(
            builder,
            `Failed to parse search results. Error: ${detail}`,
            "Failed to parse search results",
          );
        }
        parsed.data.search_results.forEach((r, i) => {
          if (i > 0) builder.write("---\n\n");
          builder.write(
            `Title: ${r.title}\nDate: ${r.date}\nURL: ${r.url}\nSummary: ${r.snippet}\n\n`,
          );
          if (r.content) builder.write(`${r.content}\n\n`);
        });
        return builder.ok();
      },
    }),
  };
}

/** Builds the SearchWeb tool, or `null` when `services.moonshot_search` is not configured. */
export const searchWebTool: ToolFactory = (env) => {
  const service = env.services.moonshotSearch;
  return service ? searchWeb(env, service) : null;
};
