/**
 * FetchURL against a local server: extraction, passthrough, errors, and the fetch service.
 *
 * @module
 */
import { FULL_SCOPE, type PermissionScope } from "../../../lib/tooling/scope.ts";
import type {
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolReturnValue,
  WebServiceConfig,
} from "../../../lib/tooling/tool.ts";
import { fetchUrlTool } from "../../../tools/fetch_url.ts";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { makeSessionRun, runTool } from "../../helpers/tool_env.ts";

// ---- private fakes (tests/helpers/tool_env.ts is owned by another engineer) ----

function fakeEnv(over: Partial<ToolEnv> = {}): ToolEnv {
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
    services: { moonshotSearch: null, moonshotFetch: null },
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
    ...over,
  };
}

const ctx: ToolCallContext = {
  toolCallId: "call-fetch-7",
  signal: new AbortController().signal,
  requestApproval: () => Promise.resolve({ approved: true }),
};

async function build(env: ToolEnv): Promise<Tool> {
  const tool = await fetchUrlTool(env);
  assert(tool);
  return tool;
}

function call(tool: Tool, url: string): Promise<ToolReturnValue> {
  return runTool(tool, { url }, ctx);
}

function briefOf(rv: ToolReturnValue): string {
  const b = rv.display.find((d) => d.type === "brief") as { text: string } | undefined;
  return b?.text ?? "";
}

const ARTICLE = `<!doctype html><html><head><title>Release notes</title>
<meta property="og:site_name" content="Example Docs"></head><body>
<nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
<article><h1>Version 2 is out</h1>
<p>This release rewrites the parser from scratch and brings a <a href="/guide">migration guide</a>
for everyone upgrading from version one. It is faster, smaller and much easier to extend.</p>
<p>Breaking changes are listed below together with the recommended replacements, so that teams can
plan the upgrade and roll it out gradually without surprises.</p>
<pre><code class="language-js">parse("x");</code></pre>
</article><footer>© Example</footer><script>console.log("tracking")</script></body></html>`;

interface Served {
  base: string;
  requests: Array<{ method: string; path: string; headers: Headers; body: string }>;
}

async function withServer(fn: (s: Served) => Promise<void>): Promise<void> {
  const served: Served = { base: "", requests: [] };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      served.requests.push({
        method: req.method,
        path: url.pathname,
        headers: req.headers,
        body: await req.text(),
      });
      switch (url.pathname) {
        case "/article":
          return new Response(ARTICLE, { headers: { "content-type": "text/html; charset=utf-8" } });
        case "/plain":
          return new Response("line one\nline two\n", {
            headers: { "content-type": "text/plain" },
          });
        case "/readme.md":
          return new Response("# Title\n\nbody", {
            headers: { "content-type": "text/markdown; charset=utf-8" },
          });
        case "/empty":
          return new Response("", { headers: { "content-type": "text/html" } });
        case "/blank-page":
          return new Response("<html><body>  </body></html>", {
            headers: { "content-type": "text/html" },
          });
        case "/service-ok":
          return new Response("# From the service\n", {
            headers: { "content-type": "text/markdown" },
          });
        case "/service-down":
          return new Response("boom", { status: 502 });
        default:
          return new Response("not here", { status: 404 });
      }
    },
  );
  served.base = `http://127.0.0.1:${server.addr.port}`;
  try {
    await fn(served);
  } finally {
    await server.shutdown();
  }
}

Deno.test("FetchURL extracts the main content of an HTML page as Markdown", async () => {
  await withServer(async (s) => {
    const rv = await call(await build(fakeEnv()), `${s.base}/article`);
    assertEquals(rv.is_error, false);
    assertEquals(
      rv.message,
      "The returned content is the main text content extracted from the page.",
    );
    const out = rv.output as string;
    assert(
      out.startsWith(
        `---\ntitle: Release notes\nurl: ${s.base}/article\nhostname: 127.0.0.1\n`,
      ),
      out,
    );
    assertStringIncludes(out, "sitename: Example Docs\n---\n");
    assertStringIncludes(out, "## Version 2 is out");
    assertStringIncludes(out, `[migration guide](${s.base}/guide)`);
    assertStringIncludes(out, '```js\nparse("x");\n```');
    assert(!out.includes("tracking"), "scripts are dropped");
    assert(!out.includes("Blog"), "navigation is dropped");
    const ua = s.requests[0].headers.get("user-agent") ?? "";
    assert(ua.startsWith("Mozilla/5.0"), ua);
  });
});

Deno.test("FetchURL passes text/plain and text/markdown through unchanged", async () => {
  await withServer(async (s) => {
    const tool = await build(fakeEnv());
    const plain = await call(tool, `${s.base}/plain`);
    assertEquals(plain.output, "line one\nline two\n");
    assertEquals(plain.message, "The returned content is the full content of the page.");
    const md = await call(tool, `${s.base}/readme.md`);
    assertEquals(md.output, "# Title\n\nbody");
  });
});

Deno.test("FetchURL reports HTTP errors, empty bodies and pages without content", async () => {
  await withServer(async (s) => {
    const tool = await build(fakeEnv());
    const missing = await call(tool, `${s.base}/nope`);
    assertEquals(missing.is_error, true);
    assertEquals(
      missing.message,
      "Failed to fetch URL. Status: 404. This may indicate the page is not accessible or the " +
        "server is down.",
    );
    assertEquals(briefOf(missing), "HTTP 404 error");

    const empty = await call(tool, `${s.base}/empty`);
    assertEquals(empty.is_error, false);
    assertEquals(empty.output, "");
    assertEquals(empty.message, "The response body is empty.");
    assertEquals(briefOf(empty), "Empty response body");

    const blank = await call(tool, `${s.base}/blank-page`);
    assertEquals(blank.is_error, true);
    assertEquals(
      blank.message,
      "Failed to extract meaningful content from the page. This may indicate the page content " +
        "is not suitable for text extraction, or the page requires JavaScript to render its content.",
    );
    assertEquals(briefOf(blank), "No content extracted");
  });
});

Deno.test("FetchURL refuses other schemes and hosts outside the sandbox", async () => {
  const tool = await build(fakeEnv());
  const file = await call(tool, "file:///etc/passwd");
  assertEquals(file.is_error, true);
  assertStringIncludes(file.message, "unsupported URL scheme `file:`");

  const denyNet: PermissionScope = {
    check: (kind, target) =>
      kind === "net"
        ? { allowed: false, message: `Denied by the sandbox: connect to \`${target}\`` }
        : { allowed: true },
  };
  const denied = await call(await build(fakeEnv({ scope: denyNet })), "http://example.com:8080/x");
  assertEquals(denied.message, "Denied by the sandbox: connect to `example.com:8080`");
  assertEquals(briefOf(denied), "Sandbox denied");
});

Deno.test("FetchURL uses the moonshot_fetch service when configured", async () => {
  await withServer(async (s) => {
    const service: WebServiceConfig = {
      baseUrl: `${s.base}/service-ok`,
      apiKey: "sk-fetch-secret",
      customHeaders: { "X-Custom": "yes" },
    };
    const tool = await build(
      fakeEnv({ services: { moonshotSearch: null, moonshotFetch: service } }),
    );
    const rv = await call(tool, "https://docs.example.org/page");
    assertEquals(rv.is_error, false);
    assertEquals(rv.output, "# From the service\n");
    assertEquals(rv.message, "The returned content is the main content extracted from the page.");
    assertEquals(s.requests.length, 1);
    const req = s.requests[0];
    assertEquals(req.method, "POST");
    assertEquals(JSON.parse(req.body), { url: "https://docs.example.org/page" });
    assertEquals(req.headers.get("authorization"), "Bearer sk-fetch-secret");
    assertEquals(req.headers.get("accept"), "text/markdown");
    assertEquals(req.headers.get("x-msh-tool-call-id"), "call-fetch-7");
    assertEquals(req.headers.get("x-custom"), "yes");
    assert((req.headers.get("user-agent") ?? "").startsWith("KimiCLI/"));
  });
});

Deno.test("FetchURL falls back to a direct request when the service fails", async () => {
  await withServer(async (s) => {
    const service: WebServiceConfig = {
      baseUrl: `${s.base}/service-down`,
      apiKey: "sk-fetch-secret",
      customHeaders: {},
    };
    const tool = await build(
      fakeEnv({ services: { moonshotSearch: null, moonshotFetch: service } }),
    );
    const rv = await call(tool, `${s.base}/plain`);
    assertEquals(rv.is_error, false);
    assertEquals(rv.output, "line one\nline two\n");
    assertEquals(s.requests.map((r) => `${r.method} ${r.path}`), [
      "POST /service-down",
      "GET /plain",
    ]);
    assert(!JSON.stringify(rv).includes("sk-fetch-secret"));
  });
});
