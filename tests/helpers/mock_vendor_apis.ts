/**
 * Mocks of the Anthropic Messages API and the Gemini / Vertex AI `streamGenerateContent` API on
 * 127.0.0.1 (random port), speaking their streaming (SSE) formats. Replies come from a queue;
 * every request is captured.
 *
 * @module
 */

/** One scripted reply. */
export interface VendorReply {
  /** Visible text. */
  text?: string;
  /** Thinking text (Anthropic thinking block / Gemini thought part). */
  thinking?: string;
  /** Anthropic thinking signature. */
  signature?: string;
  /** A tool call. */
  toolCall?: { id: string; name: string; args: Record<string, unknown>; signature?: string };
  /** HTTP error status instead of a stream. */
  status?: number;
  /** Error message. */
  error?: string;
}

/** A captured request. */
export interface VendorRequest {
  /** Path with query. */
  path: string;
  /** Lower-cased headers. */
  headers: Record<string, string>;
  /** JSON body. */
  body: any;
}

/** A running mock. */
export interface VendorMock {
  /** Base URL to configure. */
  url: string;
  /** Captured requests. */
  requests: VendorRequest[];
  /** Queue replies. */
  enqueue(...r: VendorReply[]): void;
  /** Stop. */
  close(): Promise<void>;
}

const sse = (events: [string | null, unknown][]) =>
  events.map(([name, data]) => `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(data)}\n\n`)
    .join("");

function anthropicEvents(r: VendorReply, n: number): string {
  const ev: [string, unknown][] = [[
    "message_start",
    {
      type: "message_start",
      message: {
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        model: "claude-mock",
        content: [],
        stop_reason: null,
        usage: {
          input_tokens: 20,
          output_tokens: 1,
          cache_read_input_tokens: 5,
          cache_creation_input_tokens: 2,
        },
      },
    },
  ]];
  let i = 0;
  if (r.thinking !== undefined) {
    ev.push(["content_block_start", {
      type: "content_block_start",
      index: i,
      content_block: { type: "thinking", thinking: "", signature: "" },
    }]);
    ev.push(["content_block_delta", {
      type: "content_block_delta",
      index: i,
      delta: { type: "thinking_delta", thinking: r.thinking },
    }]);
    if (r.signature) {
      ev.push(["content_block_delta", {
        type: "content_block_delta",
        index: i,
        delta: { type: "signature_delta", signature: r.signature },
      }]);
    }
    ev.push(["content_block_stop", { type: "content_block_stop", index: i++ }]);
  }
  if (r.text !== undefined) {
    ev.push(["content_block_start", {
      type: "content_block_start",
      index: i,
      content_block: { type: "text", text: "" },
    }]);
    for (const piece of r.text.match(/.{1,4}/gs) ?? []) {
      ev.push(["content_block_delta", {
        type: "content_block_delta",
        index: i,
        delta: { type: "text_delta", text: piece },
      }]);
    }
    ev.push(["content_block_stop", { type: "content_block_stop", index: i++ }]);
  }
  if (r.toolCall) {
    const json = JSON.stringify(r.toolCall.args);
    ev.push(["content_block_start", {
      type: "content_block_start",
      index: i,
      content_block: { type: "tool_use", id: r.toolCall.id, name: r.toolCall.name, input: {} },
    }]);
    for (const piece of [json.slice(0, 5), json.slice(5)]) {
      ev.push(["content_block_delta", {
        type: "content_block_delta",
        index: i,
        delta: { type: "input_json_delta", partial_json: piece },
      }]);
    }
    ev.push(["content_block_stop", { type: "content_block_stop", index: i++ }]);
  }
  ev.push(["message_delta", {
    type: "message_delta",
    delta: { stop_reason: r.toolCall ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: 7 },
  }]);
  ev.push(["message_stop", { type: "message_stop" }]);
  return sse(ev);
}

function geminiEvents(r: VendorReply, n: number): string {
  const chunks: [null, unknown][] = [];
  const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) =>
    chunks.push([null, {
      candidates: [{ content: { role: "model", parts }, index: 0 }],
      modelVersion: "gemini-mock",
      responseId: `resp_${n}`,
      ...extra,
    }]);
  if (r.thinking !== undefined) chunk([{ text: r.thinking, thought: true }]);
  if (r.text !== undefined) {
    for (const piece of r.text.match(/.{1,4}/gs) ?? []) chunk([{ text: piece }]);
  }
  if (r.toolCall) {
    chunk([{
      functionCall: { name: r.toolCall.name, args: r.toolCall.args, id: r.toolCall.id },
      ...(r.toolCall.signature ? { thoughtSignature: r.toolCall.signature } : {}),
    }]);
  }
  chunk([], {
    usageMetadata: {
      promptTokenCount: 30,
      candidatesTokenCount: 6,
      cachedContentTokenCount: 10,
      thoughtsTokenCount: 2,
      totalTokenCount: 38,
    },
  });
  return sse(chunks);
}

/** Start a mock of `kind`'s API. */
export async function startVendorMock(kind: "anthropic" | "gemini"): Promise<VendorMock> {
  const queue: VendorReply[] = [];
  const requests: VendorRequest[] = [];
  let n = 0;
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    async (req) => {
      const url = new URL(req.url);
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      const text = await req.text();
      let body: any = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = null;
      }
      requests.push({ path: url.pathname + url.search, headers, body });
      const ok = kind === "anthropic"
        ? req.method === "POST" && url.pathname === "/v1/messages"
        : req.method === "POST" && url.pathname.endsWith(":streamGenerateContent");
      if (!ok) return Response.json({ error: `no route ${url.pathname}` }, { status: 404 });
      const reply = queue.shift() ?? { text: "done" };
      if (reply.status) {
        const message = reply.error ?? `mock error ${reply.status}`;
        return Response.json(
          kind === "anthropic"
            ? { type: "error", error: { type: "mock_error", message } }
            : { error: { code: reply.status, message, status: "MOCK" } },
          { status: reply.status },
        );
      }
      n++;
      return new Response(
        kind === "anthropic" ? anthropicEvents(reply, n) : geminiEvents(reply, n),
        {
          headers: { "content-type": "text/event-stream" },
        },
      );
    },
  );
  const port = await ready.promise;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...r) => void queue.push(...r),
    close: () => server.shutdown(),
  };
}
