/**
 * Print mode with `--input-format stream-json`: media content parts reach the model as parts;
 * a model without the capability refuses clearly.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const IMAGE = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==";

function userLine(parts: unknown[]): string {
  return JSON.stringify({ role: "user", content: parts }) + "\n";
}

Deno.test("print stream-json: an image part reaches the model", opts, async () => {
  const sb = await kimiSandbox();
  const mock = await startMockOpenAI({ defaultReply: { text: "a red square" } });
  try {
    const config = await sb.openaiConfig(mock.url, { capabilities: ["image_in"] });
    const r = await sb.run(
      [
        "--print",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--config-file",
        config,
      ],
      {
        stdin: userLine([
          { type: "text", text: "describe" },
          { type: "image_url", image_url: { url: IMAGE } },
        ]),
      },
    );
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, "a red square");
    const user = mock.requests[0].body.messages.find((m: any) => m.role === "user");
    // print mode adds its afk reminder after the user's parts
    assertEquals(user.content.slice(0, 2), [
      { type: "text", text: "describe" },
      { type: "image_url", image_url: { url: IMAGE } },
    ]);
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});

Deno.test(
  "print stream-json: a video for a model without video_in is refused clearly",
  opts,
  async () => {
    const sb = await kimiSandbox();
    const mock = await startMockOpenAI();
    try {
      const config = await sb.openaiConfig(mock.url, { capabilities: ["image_in"] });
      const r = await sb.run(
        ["--print", "--input-format", "stream-json", "--config-file", config],
        {
          stdin: userLine([
            { type: "text", text: "what happens?" },
            { type: "video_url", video_url: { url: "data:video/mp4;base64,AAAA" } },
          ]),
        },
      );
      assertEquals(r.code, 1);
      assertStringIncludes(r.stdout, "video_in");
      assert(mock.requests.every((q) => q.path !== "/v1/chat/completions"), "nothing was sent");
    } finally {
      await mock.close();
      await sb.cleanup();
    }
  },
);
