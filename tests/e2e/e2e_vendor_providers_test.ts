/**
 * The `anthropic`, `gemini` (`google_genai`) and `vertexai` provider types through `main.ts
 * --print` against mocks of their HTTP APIs: streamed text, thinking, a tool call round trip,
 * usage, and each error class with its exit code.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox } from "../helpers/kimi_process.ts";
import { startVendorMock, type VendorMock } from "../helpers/mock_vendor_apis.ts";

const KEY = "vendor-secret-key-123";
const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

const CASES = [
  { type: "anthropic", mock: "anthropic", model: "claude-sonnet-4-5" },
  { type: "gemini", mock: "gemini", model: "gemini-2.5-pro" },
  { type: "google_genai", mock: "gemini", model: "gemini-2.5-flash" },
  { type: "vertexai", mock: "gemini", model: "gemini-2.5-pro" },
] as const;

async function config(
  sb: KimiSandbox,
  type: string,
  baseUrl: string,
  model: string,
): Promise<string> {
  const path = `${sb.root}/config-${type}-${crypto.randomUUID().slice(0, 8)}.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      default_model: "m",
      models: { m: { provider: "p", model, max_context_size: 200000, capabilities: ["thinking"] } },
      providers: { p: { type, base_url: baseUrl, api_key: KEY } },
    }),
  );
  return path;
}

for (const c of CASES) {
  Deno.test(`${c.type}: streamed text with thinking, then a tool call round trip`, async () => {
    const sb = await kimiSandbox();
    const mock: VendorMock = await startVendorMock(c.mock);
    try {
      await Deno.writeTextFile(`${sb.workDir}/note.txt`, "the secret word is tangerine\n");
      const cfg = await config(sb, c.type, mock.url, c.model);
      mock.enqueue(
        {
          thinking: "let me look",
          signature: "sig-1",
          text: "Reading.",
          toolCall: {
            id: "call_1",
            name: "ReadFile",
            args: { path: "note.txt" },
            signature: "g-sig",
          },
        },
        { text: "The word is tangerine." },
      );
      const r = await sb.run([
        "--print",
        "--output-format",
        "stream-json",
        "--thinking",
        "--config-file",
        cfg,
        "-p",
        "what is the word?",
      ]);
      assertEquals(r.code, 0, r.stdout + r.stderr);
      const out = jsonLines(r.stdout);
      const first = out[0];
      assertEquals(first.role, "assistant");
      assertEquals(first.tool_calls, [{
        type: "function",
        id: "call_1",
        function: { name: "ReadFile", arguments: '{"path":"note.txt"}' },
        ...(c.mock === "gemini" ? { extras: { thought_signature: "g-sig" } } : {}),
      }]);
      const think = first.content.find((p: any) => p.type === "think");
      assertEquals(think.think, "let me look");
      if (c.mock === "anthropic") assertEquals(think.encrypted, "sig-1");
      assert(first.content.some((p: any) => p.type === "text" && p.text === "Reading."));
      assertEquals(out[1].role, "tool");
      assertEquals(out.at(-1), { role: "assistant", content: "The word is tangerine." });

      assertEquals(mock.requests.length, 2);
      const [req1, req2] = mock.requests;
      if (c.mock === "anthropic") {
        assertEquals(req1.path, "/v1/messages");
        // the SDK decides how the key travels (x-api-key or a bearer token)
        assert(
          req1.headers["x-api-key"] === KEY || req1.headers.authorization === `Bearer ${KEY}`,
        );
        assertEquals(req1.body.model, c.model);
        assertEquals(req1.body.stream, true);
        assertEquals(req1.body.thinking, { type: "enabled", budget_tokens: 32000 });
        assert(req1.body.system[0].text.length > 100);
        assert(
          req1.body.tools.some((t: any) =>
            t.name === "ReadFile" && t.input_schema.type === "object"
          ),
        );
        assertEquals(req1.body.metadata.user_id.length, 36);
        // the tool result goes back as a user tool_result after the signed thinking + tool_use
        const assistant = req2.body.messages.at(-2);
        assertEquals(assistant.role, "assistant");
        assertEquals(assistant.content[0], {
          type: "thinking",
          thinking: "let me look",
          signature: "sig-1",
        });
        assertEquals(assistant.content.at(-1), {
          type: "tool_use",
          id: "call_1",
          name: "ReadFile",
          input: { path: "note.txt" },
        });
        const result = req2.body.messages.at(-1).content.find((b: any) => b.type === "tool_result");
        assertEquals(result.tool_use_id, "call_1");
        assertStringIncludes(JSON.stringify(result.content), "tangerine");
      } else {
        assertStringIncludes(req1.path, `${c.model}:streamGenerateContent`);
        assertStringIncludes(req1.path, "alt=sse");
        assertEquals(req1.headers["x-goog-api-key"], KEY);
        assert(JSON.stringify(req1.body.systemInstruction).length > 100);
        const decls = req1.body.tools[0].functionDeclarations;
        assert(
          decls.some((d: any) => d.name === "ReadFile" && d.parametersJsonSchema.type === "object"),
        );
        assertEquals(req1.body.generationConfig.thinkingConfig, {
          includeThoughts: true,
          thinkingBudget: 24576,
        });
        const model = req2.body.contents.at(-2);
        assertEquals(model.role, "model");
        assertEquals(model.parts.at(-1), {
          functionCall: { id: "call_1", name: "ReadFile", args: { path: "note.txt" } },
          thoughtSignature: "g-sig",
        });
        const response = req2.body.contents.at(-1).parts.find((p: any) => p.functionResponse);
        assertEquals(response.functionResponse.name, "ReadFile");
        assertEquals(response.functionResponse.id, "call_1");
        assertStringIncludes(response.functionResponse.response.output, "tangerine");
      }
    } finally {
      await mock.close();
      await sb.cleanup();
    }
  });

  Deno.test(`${c.type}: errors map to the provider error classes and exit codes`, async () => {
    const sb = await kimiSandbox();
    const mock = await startVendorMock(c.mock);
    try {
      const cfg = await config(sb, c.type, mock.url, c.model);
      const run = (cfgPath = cfg) =>
        sb.run(["--print", "--max-retries-per-step", "1", "--config-file", cfgPath, "-p", "hi"]);

      mock.enqueue({ status: 401, error: `bad key ${KEY}` });
      let r = await run();
      assertEquals(r.code, 1, r.stdout); // APIStatusError, not retryable
      assertStringIncludes(r.stdout, "401");
      assert(!r.stdout.includes(KEY) && !r.stderr.includes(KEY), "key leaked");

      mock.enqueue({ status: 429, error: "slow down" });
      r = await run();
      assertEquals(r.code, 75, r.stdout); // retryable status

      mock.enqueue({ status: 503, error: "overloaded" });
      r = await run();
      assertEquals(r.code, 75, r.stdout);

      mock.enqueue({ status: 400, error: "bad request" });
      r = await run();
      assertEquals(r.code, 1, r.stdout);
      assertStringIncludes(r.stdout, "bad request");

      // connection refused: APIConnectionError, retryable
      r = await run(await config(sb, c.type, "http://127.0.0.1:9", c.model));
      assertEquals(r.code, 75, r.stdout);
      assertStringIncludes(r.stdout.toLowerCase(), "connection");

      // a stream with no content: APIEmptyResponseError, retryable
      mock.enqueue({});
      r = await run();
      assertEquals(r.code, 75, r.stdout);

      // with retries left, a transient error is retried and the turn succeeds
      mock.enqueue({ status: 503, error: "overloaded" }, { text: "recovered" });
      r = await sb.run(["--quiet", "--config-file", cfg, "-p", "hi"]);
      assertEquals(r.code, 0, r.stdout + r.stderr);
      assertEquals(r.stdout.trim(), "recovered");
      assert(!r.stderr.includes("deprecated"), "an SDK notice reached the terminal");
    } finally {
      await mock.close();
      await sb.cleanup();
    }
  });
}
