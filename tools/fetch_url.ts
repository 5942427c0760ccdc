/**
 * FetchURL: fetch a page through the `moonshot_fetch` service when configured, else (or when
 * the service fails) directly, extracting the main content of HTML pages as Markdown.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { toolError, ToolResultBuilder } from "../lib/tooling/result.ts";
import type { PermissionScope } from "../lib/tooling/scope.ts";
import type {
  Tool,
  ToolCallContext,
  ToolFactory,
  ToolReturnValue,
  WebServiceConfig,
} from "../lib/tooling/tool.ts";
import { extractMainContent, renderExtractedPage } from "../lib/web/html_to_markdown.ts";
import {
  describeError,
  hostOf,
  isTimeoutError,
  serviceConfigured,
  serviceHeaders,
  withTimeout,
} from "../lib/web/service_request.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** How long one request may take. */
export const FETCH_TIMEOUT_MS = 180_000;
/** User-Agent of direct requests (many sites refuse unknown agents). */
export const BROWSER_USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) " +
  "Chrome/124.0.0.0 Safari/537.36";

/** FetchURL parameters. */
export const fetchUrlParamsSchema = lazyValue(() =>
  z.object({
    url: z.string().describe("Address of the page to fetch."),
  })
);
/** FetchURL parameters. */
export type FetchUrlParams = z.infer<ReturnType<typeof fetchUrlParamsSchema>>;

function networkError(builder: ToolResultBuilder, detail: string): ToolReturnValue {
  return builder.error(
    `Failed to fetch URL due to network error: ${detail}. ` +
      "This may indicate the URL is invalid or the server is unreachable.",
    { brief: "Network error" },
  );
}

/** Decode a body with the charset named in its content type (UTF-8 otherwise). */
function decodeBody(bytes: Uint8Array, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (charset) {
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      // unknown label: fall back to UTF-8
    }
  }
  return new TextDecoder().decode(bytes);
}

/** Builds the FetchURL tool. */
export const fetchUrlTool: ToolFactory = (env): Tool<FetchUrlParams> => ({
  name: "FetchURL",
  description: readAsset("tools/fetch_url.md"),
  get parameters() {
    return fetchUrlParamsSchema();
  },
  jsonSchema: PARAM_JSON_SCHEMAS.FetchURL,
  resolve(params) {
    const url = params.url.trim();
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return networkError(new ToolResultBuilder(), `\`${url}\` is not a valid URL`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      return networkError(
        new ToolResultBuilder(),
        `unsupported URL scheme \`${parsed.protocol}\` (only http and https are fetched)`,
      );
    }
    const decision = env.scope.check("net", parsed.host);
    if (!decision.allowed) return toolError({ message: decision.message, brief: "Sandbox denied" });
    return {
      accesses: [{ kind: "net", host: parsed.host }],
      async execute(ctx) {
        const service = env.services.moonshotFetch;
        if (service && serviceConfigured(service)) {
          const viaService = await fetchWithService(env.scope, service, url, ctx);
          if (viaService && !viaService.is_error) return viaService;
          // any service failure: fetch it ourselves
        }
        return await fetchDirect(url, ctx);
      },
    };
  },
});

async function fetchWithService(
  scope: PermissionScope,
  service: WebServiceConfig,
  url: string,
  ctx: ToolCallContext,
): Promise<ToolReturnValue | null> {
  const host = hostOf(service.baseUrl);
  if (!host || !scope.check("net", host).allowed) return null;
  const builder = new ToolResultBuilder();
  try {
    const resp = await fetch(service.baseUrl, {
      method: "POST",
      headers: {
        ...(await serviceHeaders(service, ctx.toolCallId, { "Accept": "text/markdown" })),
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ url }),
      signal: withTimeout(ctx.signal, FETCH_TIMEOUT_MS),
    });
    if (resp.status !== 200) {
      await resp.body?.cancel();
      return builder.error(`Failed to fetch URL via service. Status: ${resp.status}.`, {
        brief: "Failed to fetch URL via fetch service",
      });
    }
    builder.write(await resp.text());
    return builder.ok("The returned content is the main content extracted from the page.");
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    return builder.error(
      `Failed to fetch URL via service due to network error: ${describeError(e)}. ` +
        "This may indicate the service is unreachable.",
      { brief: "Network error when calling fetch service" },
    );
  }
}

async function fetchDirect(url: string, ctx: ToolCallContext): Promise<ToolReturnValue> {
  const builder = new ToolResultBuilder();
  let status: number;
  let contentType: string;
  let text: string;
  try {
    const resp = await fetch(url, {
      headers: {
        "User-Agent": BROWSER_USER_AGENT,
        "Accept": "text/html,application/xhtml+xml,text/plain,text/markdown;q=0.9,*/*;q=0.8",
      },
      redirect: "follow",
      signal: withTimeout(ctx.signal, FETCH_TIMEOUT_MS),
    });
    status = resp.status;
    if (status >= 400) {
      await resp.body?.cancel();
      return builder.error(
        `Failed to fetch URL. Status: ${status}. ` +
          "This may indicate the page is not accessible or the server is down.",
        { brief: `HTTP ${status} error` },
      );
    }
    contentType = (resp.headers.get("content-type") ?? "").toLowerCase();
    text = decodeBody(new Uint8Array(await resp.arrayBuffer()), contentType);
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    if (isTimeoutError(e, ctx.signal)) {
      return builder.error(
        `Failed to fetch URL: no complete response within ${FETCH_TIMEOUT_MS / 1000} seconds. ` +
          "The server may be slow or unreachable; try again later or another source.",
        { brief: "Request timed out" },
      );
    }
    return networkError(builder, describeError(e));
  }

  if (contentType.startsWith("text/plain") || contentType.startsWith("text/markdown")) {
    builder.write(text);
    return builder.ok("The returned content is the full content of the page.");
  }
  if (!text) return builder.ok("The response body is empty.", { brief: "Empty response body" });

  const page = await extractMainContent(text, url).catch(() => null);
  if (!page) {
    return builder.error(
      "Failed to extract meaningful content from the page. " +
        "This may indicate the page content is not suitable for text extraction, " +
        "or the page requires JavaScript to render its content.",
      { brief: "No content extracted" },
    );
  }
  builder.write(renderExtractedPage(page, url));
  return builder.ok("The returned content is the main text content extracted from the page.");
}
