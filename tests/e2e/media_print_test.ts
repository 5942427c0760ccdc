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

Deno.test(
  "print stream-json: Kimi gets a video uploaded once and referenced as ms://",
  opts,
  async () => {
    const sb = await kimiSandbox();
    const mock = await startMockOpenAI({ defaultReply: { text: "a cat jumps" } });
    try {
      const config = await sb.openaiConfig(mock.url, {
        type: "kimi",
        model: "kimi-k2.5",
        capabilities: ["video_in", "image_in"],
      });
      const video = "data:video/mp4;base64,AAAAGGZ0eXBtcDQy";
      const line = userLine([
        { type: "text", text: "what happens?" },
        { type: "video_url", video_url: { url: video } },
      ]);
      const r = await sb.run(
        ["--print", "--input-format", "stream-json", "--config-file", config],
        { stdin: line + JSON.stringify({ role: "user", content: "and then?" }) + "\n" },
      );
      assertEquals(r.code, 0, r.stderr);
      const uploads = mock.requests.filter((q) => q.path === "/v1/files");
      assertEquals(uploads.length, 1, "uploaded once although sent in two requests");
      assertEquals(uploads[0].body.purpose, "video");
      assertEquals(uploads[0].body.content_type, "video/mp4");
      assertEquals(uploads[0].body.base64, "AAAAGGZ0eXBtcDQy");
      const chats = mock.requests.filter((q) => q.path === "/v1/chat/completions");
      assertEquals(chats.length, 2);
      for (const chat of chats) {
        const user = chat.body.messages.find((m: any) => m.role === "user");
        assertEquals(user.content[1], { type: "video_url", video_url: { url: "ms://file-1" } });
      }
    } finally {
      await mock.close();
      await sb.cleanup();
    }
  },
);
