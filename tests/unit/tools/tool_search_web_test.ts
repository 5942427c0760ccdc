/**
 * SearchWeb against a mock moonshot_search service on 127.0.0.1.
 *
 * @module
 */
import { FULL_SCOPE } from "../../../lib/tooling/scope.ts";
import type {
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolReturnValue,
  WebServiceConfig,
} from "../../../lib/tooling/tool.ts";
import { searchWebTool } from "../../../tools/search_web.ts";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { makeSessionRun, runTool } from "../../helpers/tool_env.ts";

// ---- private fakes (tests/helpers/tool_env.ts is owned by another engineer) ----

function fakeEnv(search: WebServiceConfig | null): ToolEnv {
  return {
    workDir: "/tmp",
    additionalDirs: () => [],
    shareDir: "/tmp",
    sessionDir: "/tmp",
    run: makeSessionRun({ shareDir: "/tmp", sessionDir: "/tmp" }),
    sessionId: "s",
    modelCapabilities: new Set(),
    isRoot: true,
    scope: FULL_SCOPE,
    services: { moonshotSearch: search, moonshotFetch: null },
    background: {
      maxRunningTasks: 4,
      readMaxBytes: 30_000,
      notificationTailLines: 20,
      notificationTailChars: 3000,
      killGracePeriodMs: 2000,
    },
    childEnv: () => ({}),
    planMode: () => ({ active: false, planFile: null }),
    todos: { get: () => [], set: () => Promise.resolve() },
    emit: () => {},
    askQuestions: () => Promise.resolve(null),
    isAfk: () => false,
  };
}

const ctx: ToolCallContext = {
  toolCallId: "call-search-1",
  signal: new AbortController().signal,
  requestApproval: () => Promise.resolve({ approved: true }),
};

function briefOf(rv: ToolReturnValue): string {
  const b = rv.display.find((d) => d.type === "brief") as { text: string } | undefined;
  return b?.text ?? "";
}

const LONG_LINE = "y".repeat(3000);

interface Mock {
  url: string;
  requests: Array<{ headers: Headers; body: unknown }>;
  reply: () => Response;
}

async function withService(fn: (m: Mock) => Promise<void>): Promise<void> {
  const mock: Mock = {
    url: "",
    requests: [],
    reply: () =>
      Response.json({
        search_results: [
          {
            site_name: "Deno",
            title: "Deno 2",
            url: "https://deno.com/blog/v2",
            snippet: "Deno 2 is here.",
            date: "2024-10-09",
            icon: "",
          },
          {
            site_name: "Docs",
            title: "Permissions",
            url: "https://docs.deno.com/runtime/permissions",
            snippet: "How permissions work.",
            content: `Full page text.\n${LONG_LINE}`,
          },
        ],
      }),
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    mock.requests.push({ headers: req.headers, body: await req.json().catch(() => null) });
    return mock.reply();
  });
  mock.url = `http://127.0.0.1:${server.addr.port}/search`;
  try {
    await fn(mock);
  } finally {
    await server.shutdown();
  }
}

async function build(service: WebServiceConfig | null): Promise<Tool | null> {
  return await searchWebTool(fakeEnv(service));
}

function call(tool: Tool, raw: unknown): Promise<ToolReturnValue> {
  return runTool(tool, raw, ctx);
}

Deno.test("SearchWeb is not offered without services.moonshot_search", async () => {
  assertEquals(await build(null), null);
});

Deno.test("SearchWeb posts the query and formats the results", async () => {
  await withService(async (m) => {
    const tool = await build({
      baseUrl: m.url,
      apiKey: "sk-search",
      customHeaders: { "X-A": "b" },
    });
    assert(tool);
    assertEquals(tool.name, "SearchWeb");
    const rv = await call(tool, { query: "deno permissions", limit: 2, include_content: true });
    assertEquals(rv.is_error, false);
    assertEquals(rv.message, "");
    assertEquals(
      rv.output,
      "Title: Deno 2\nDate: 2024-10-09\nURL: https://deno.com/blog/v2\nSummary: Deno 2 is here.\n\n" +
        "---\n\n" +
        "Title: Permissions\nDate: \nURL: https://docs.deno.com/runtime/permissions\n" +
        `Summary: How permissions work.\n\nFull page text.\n${LONG_LINE}\n\n`,
    );
    const [req] = m.requests;
    assertEquals(req.body, {
      text_query: "deno permissions",
      limit: 2,
      enable_page_crawling: true,
      timeout_seconds: 30,
    });
    assertEquals(req.headers.get("authorization"), "Bearer sk-search");
    assertEquals(req.headers.get("x-msh-tool-call-id"), "call-search-1");
    assertEquals(req.headers.get("x-a"), "b");
    assertEquals(req.headers.get("content-type"), "application/json");
  });
});

Deno.test("SearchWeb uses the defaults limit=5 and include_content=false", async () => {
  await withService(async (m) => {
    const tool = await build({ baseUrl: m.url, apiKey: "k", customHeaders: {} });
    await call(tool!, { query: "q" });
    assertEquals(m.requests[0].body, {
      text_query: "q",
      limit: 5,
      enable_page_crawling: false,
      timeout_seconds: 30,
    });
    assertEquals(tool!.parameters.safeParse({ query: "q", limit: 21 }).success, false);
  });
});

Deno.test("SearchWeb reports service errors", async () => {
  await withService(async (m) => {
    const tool = (await build({ baseUrl: m.url, apiKey: "sk-search", customHeaders: {} }))!;
    m.reply = () => new Response("nope", { status: 503 });
    const status = await call(tool, { query: "q" });
    assertEquals(status.is_error, true);
    assertEquals(
      status.message,
      "Failed to search. Status: 503. This may indicate that the search service is currently " +
        "unavailable.",
    );
    assertEquals(briefOf(status), "Failed to search");

    m.reply = () => Response.json({ results: [] });
    const shape = await call(tool, { query: "q" });
    assertEquals(briefOf(shape), "Failed to parse search results");
    assertStringIncludes(shape.message, "Failed to parse search results. Error: search_results:");
    assert(
      shape.message.endsWith("This may indicate that the search service is currently unavailable."),
    );

    m.reply = () => new Response("{not json", { headers: { "content-type": "application/json" } });
    const syntax = await call(tool, { query: "q" });
    assertEquals(briefOf(syntax), "Failed to parse search results");
    assert(!JSON.stringify([status, shape, syntax]).includes("sk-search"));
  });
});

Deno.test("SearchWeb reports an unreachable service and a missing key", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const tool =
    (await build({ baseUrl: `http://127.0.0.1:${port}/s`, apiKey: "k", customHeaders: {} }))!;
  const rv = await call(tool, { query: "q" });
  assertEquals(rv.is_error, true);
  assert(rv.message.startsWith("Failed to search due to network error: "), rv.message);
  assertEquals(briefOf(rv), "Network error");

  const keyless =
    (await build({ baseUrl: "http://127.0.0.1:1/s", apiKey: "", customHeaders: {} }))!;
  const missing = await call(keyless, { query: "q" });
  assertEquals(
    missing.message,
    "Search service is not configured. You may want to try other methods to search.",
  );
  assertEquals(briefOf(missing), "Search service not configured");
});
