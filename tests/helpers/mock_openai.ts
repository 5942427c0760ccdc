/**
 * A scriptable OpenAI-compatible server for tests and benchmarks, on 127.0.0.1 (random port).
 *
 * It serves `POST /v1/chat/completions` (streamed `chat.completion.chunk` SSE), `POST
 * /v1/responses` (streamed Responses events), `POST /v1/files` (multipart uploads, answered
 * with `file-<n>` ids) and `GET /v1/models`. Replies come from a FIFO
 * queue shared by both endpoints; when it is empty, `auto(body)` computes one, else the default
 * reply (a final text `done`) is used. Every request is captured. Request bodies are read with
 * or without a `Content-Length` (chunked, as kimi streams bodies of 1 MiB and more), unless
 * `refuseChunked` makes the mock a server that insists on a length.
 *
 * @module
 */

/** A tool call the mock streams. */
export interface MockToolCall {
  /** Call id. */
  id: string;
  /** Function name. */
  name: string;
  /** Arguments, or argument fragments streamed one per chunk. */
  arguments: string | string[];
}

/** Usage the mock reports at the end of a stream. */
export interface MockUsage {
  /** Prompt (input) tokens, cached ones included. */
  prompt_tokens: number;
  /** Completion (output) tokens. */
  completion_tokens: number;
  /** Cached prompt tokens. */
  cached_tokens?: number;
  /**
   * Chat only: where cached tokens go — `details` (OpenAI `prompt_tokens_details`, default) or
   * `top` (Moonshot's top-level `cached_tokens`).
   */
  cached_tokens_at?: "details" | "top";
}

/** A successful streamed reply. Parts stream in the order reasoning, text, tool calls. */
export interface MockStreamReply {
  /** Visible text, or text chunks. */
  text?: string | string[];
  /** Reasoning, or reasoning chunks (chat: in `reasoningKey`; responses: summary deltas). */
  reasoning?: string | string[];
  /** Chat only: delta field for reasoning. Default `reasoning_content`. */
  reasoningKey?: string;
  /** Responses only: `encrypted_content` of the reasoning item. */
  encryptedReasoning?: string;
  /** Tool calls. */
  toolCalls?: MockToolCall[];
  /** Usage; omitted means no usage chunk/field. */
  usage?: MockUsage;
  /** Chat chunk id / responses message item id. Default generated. */
  id?: string;
  /** Delay before answering, in ms. */
  delayMs?: number;
  /** Answer only once this settles (a state the test sets up while the request waits). */
  waitFor?: Promise<unknown>;
  /** Delay between streamed events, in ms. */
  chunkDelayMs?: number;
  /**
   * Split string `text` and `reasoning` into chunks of this many characters (e.g. 4, as some
   * servers stream), so chunk boundaries fall anywhere: inside words, markup and blank lines.
   */
  chunkChars?: number;
  /**
   * Chat only: after the reasoning and text chunks, stream this part forever (64 KiB chunks of
   * `x`) until the client goes away. `tool_arguments` opens one call (`endless_call`) first.
   */
  endless?: "text" | "reasoning" | "tool_arguments";
  /** Chat only: after the reasoning and text chunks, send nothing more and never end. */
  stall?: boolean;
}

/** An HTTP error reply. */
export interface MockErrorReply {
  /** HTTP status. */
  status: number;
  /** Error message placed in `{"error": {"message": ...}}`. */
  error?: string;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /** Delay before answering, in ms. */
  delayMs?: number;
  /** A raw body instead of the JSON error object (e.g. a proxy's HTML page). */
  body?: string;
  /** Content type of a raw `body`. Default `text/html; charset=utf-8`. */
  contentType?: string;
}

/** Any reply the mock can give. */
export type MockReply = MockStreamReply | MockErrorReply;

/** One request the mock received. */
export interface CapturedRequest {
  /** HTTP method. */
  method: string;
  /** URL path, e.g. `/v1/chat/completions`. */
  path: string;
  /** Request headers, lower-cased names. */
  headers: Record<string, string>;
  /** Parsed JSON body, or null. */
  body: any;
  /** The body's raw text, kept only with {@link MockOpenAIOptions.keepText}. */
  text?: string;
}

/** Options of {@link startMockOpenAI}. */
export interface MockOpenAIOptions {
  /** Computes a reply when the queue is empty. Returning undefined falls back to the default. */
  auto?: (body: any, request: CapturedRequest) => MockReply | undefined;
  /** Reply used when the queue is empty and `auto` gives none. Default `{ text: "done" }`. */
  defaultReply?: MockReply;
  /** Model ids listed by `GET /v1/models`. Default `["mock-model"]`. */
  models?: string[];
  /** Default {@link MockStreamReply.chunkChars} of every streamed reply. */
  chunkChars?: number;
  /**
   * Chat only: answer 400 like OpenAI when an assistant's tool calls are not each followed by
   * a tool message (or a tool message answers no call).
   */
  checkToolPairing?: boolean;
  /**
   * Answer `411 Length Required` (after reading and capturing it) to every POST whose body came
   * chunked (`Transfer-Encoding: chunked`, no `Content-Length`), as a proxy refusing them does.
   */
  refuseChunked?: boolean;
  /** Keep each request's raw body text in {@link CapturedRequest.text}. */
  keepText?: boolean;
}

/** A running mock server. */
export interface MockOpenAI {
  /** Base URL ending in `/v1`. */
  url: string;
  /** Every request received, in order. */
  requests: CapturedRequest[];
  /** Queue replies for the next requests (both endpoints share the queue). */
  enqueue(...replies: MockReply[]): void;
  /** Stop the server. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();

/** Start a mock server on 127.0.0.1 with a random port. */
export async function startMockOpenAI(opts: MockOpenAIOptions = {}): Promise<MockOpenAI> {
  const queue: MockReply[] = [];
  const requests: CapturedRequest[] = [];
  let counter = 0;
  const ready = Promise.withResolvers<number>();
  const closing = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    async (req) => {
      const url = new URL(req.url);
      if (req.method === "POST" && url.pathname === "/v1/files") {
        // a file upload (multipart): captured with its bytes as base64
        const form = await req.formData();
        const file = form.get("file") as File | null;
        const bytes = file ? new Uint8Array(await file.arrayBuffer()) : new Uint8Array();
        const headers: Record<string, string> = {};
        req.headers.forEach((v, k) => (headers[k] = v));
        const id = `file-${requests.filter((r) => r.path === "/v1/files").length + 1}`;
        requests.push({
          method: "POST",
          path: url.pathname,
          headers,
          body: {
            purpose: form.get("purpose"),
            filename: file?.name ?? null,
            content_type: file?.type ?? null,
            base64: btoa(String.fromCharCode(...bytes)),
          },
        });
        return Response.json({
          id,
          object: "file",
          bytes: bytes.length,
          created_at: 0,
          filename: file?.name ?? "upload",
          purpose: form.get("purpose"),
          status: "processed",
        });
      }
      const text = req.method === "GET" ? "" : await req.text();
      let body: any = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = null;
      }
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      const captured: CapturedRequest = { method: req.method, path: url.pathname, headers, body };
      if (opts.keepText) captured.text = text;
      requests.push(captured);
      if (
        opts.refuseChunked && req.method === "POST" && headers["content-length"] === undefined
      ) {
        return new Response("Length Required", { status: 411 });
      }

      if (req.method === "GET" && url.pathname === "/v1/models") {
        const data = (opts.models ?? ["mock-model"]).map((id) => ({
          id,
          object: "model",
          created: 0,
          owned_by: "mock",
        }));
        return Response.json({ object: "list", data });
      }
      const isChat = url.pathname === "/v1/chat/completions";
      const isResponses = url.pathname === "/v1/responses";
      if (req.method !== "POST" || (!isChat && !isResponses)) {
        return Response.json({ error: { message: `No route ${req.method} ${url.pathname}` } }, {
          status: 404,
        });
      }
      const unpaired = isChat && opts.checkToolPairing ? toolPairingError(body) : null;
      if (unpaired) {
        return Response.json({
          error: { message: unpaired, type: "invalid_request_error", param: "messages" },
        }, { status: 400 });
      }
      const reply = queue.shift() ?? opts.auto?.(body, captured) ?? opts.defaultReply ??
        { text: "done" };
      // Delays end early when the mock closes (a killed client never reads the reply).
      if (reply.delayMs) await sleep(reply.delayMs, closing.signal);
      if ("waitFor" in reply && reply.waitFor) await reply.waitFor;
      if ("status" in reply) {
        if (reply.body !== undefined) {
          return new Response(reply.body, {
            status: reply.status,
            headers: {
              "content-type": reply.contentType ?? "text/html; charset=utf-8",
              ...reply.headers,
            },
          });
        }
        return Response.json(
          { error: { message: reply.error ?? `Mock error ${reply.status}`, type: "mock_error" } },
          { status: reply.status, headers: reply.headers },
        );
      }
      counter++;
      const sized = opts.chunkChars && reply.chunkChars === undefined
        ? { ...reply, chunkChars: opts.chunkChars }
        : reply;
      const events: Iterator<string> = isChat
        ? (sized.endless || sized.stall
          ? endlessChatEvents(sized, body?.model ?? "mock-model", counter)
          : chatEvents(sized, body?.model ?? "mock-model", counter).values())
        : responsesEvents(sized, body?.model ?? "mock-model", counter).values();
      const stream = new ReadableStream<Uint8Array>({
        // Pulled, so an endless reply streams only as fast as the client reads.
        async pull(controller) {
          if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
          const next = events.next();
          if (next.done) {
            if (!reply.stall) controller.close();
            return new Promise<void>(() => {}); // stall: never ready again
          }
          controller.enqueue(encoder.encode(next.value));
        },
      }, { highWaterMark: 0 });
      return new Response(stream, {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    },
  );
  const port = await ready.promise;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    close: async () => {
      closing.abort();
      await server.shutdown();
    },
  };
}

/** OpenAI's complaint about tool calls and tool messages that do not pair up, or null. */
function toolPairingError(body: any): string | null {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "tool") {
      return "Invalid parameter: messages with role 'tool' must be a response to a preceeding " +
        "message with 'tool_calls'.";
    }
    if (m.role !== "assistant" || !m.tool_calls?.length) continue;
    const ids = new Set<string>(m.tool_calls.map((c: any) => c.id));
    while (messages[i + 1]?.role === "tool") {
      const answered = messages[++i].tool_call_id;
      if (!ids.delete(answered)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a " +
          "preceeding message with 'tool_calls'.";
      }
    }
    if (ids.size > 0) {
      return "An assistant message with 'tool_calls' must be followed by tool messages " +
        "responding to each 'tool_call_id'. The following tool_call_ids did not have response " +
        `messages: ${[...ids].join(", ")}`;
    }
  }
  return null;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

function chunks(v: string | string[] | undefined, size?: number): string[] {
  if (v === undefined) return [];
  if (typeof v !== "string") return v;
  if (!size || size <= 0) return [v];
  const out: string[] = [];
  const chars = [...v];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/** SSE lines of a streamed chat completion. */
function chatEvents(reply: MockStreamReply, model: string, n: number): string[] {
  const id = reply.id ?? `chatcmpl-mock-${n}`;
  const base = { id, object: "chat.completion.chunk", created: 0, model };
  const out: string[] = [];
  const push = (delta: Record<string, unknown>, finish: string | null = null) =>
    out.push(
      `data: ${
        JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })
      }\n\n`,
    );
  push({ role: "assistant", content: "" });
  const key = reply.reasoningKey ?? "reasoning_content";
  for (const r of chunks(reply.reasoning, reply.chunkChars)) push({ [key]: r });
  for (const t of chunks(reply.text, reply.chunkChars)) push({ content: t });
  (reply.toolCalls ?? []).forEach((tc, index) => {
    const frags = chunks(tc.arguments);
    push({
      tool_calls: [{
        index,
        id: tc.id,
        type: "function",
        function: { name: tc.name, arguments: frags[0] ?? "" },
      }],
    });
    for (const f of frags.slice(1)) push({ tool_calls: [{ index, function: { arguments: f } }] });
  });
  push({}, reply.toolCalls?.length ? "tool_calls" : "stop");
  if (reply.usage) {
    const u = reply.usage;
    const usage: Record<string, unknown> = {
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      total_tokens: u.prompt_tokens + u.completion_tokens,
    };
    if (u.cached_tokens !== undefined) {
      if (u.cached_tokens_at === "top") usage.cached_tokens = u.cached_tokens;
      else usage.prompt_tokens_details = { cached_tokens: u.cached_tokens };
    }
    out.push(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
  }
  out.push("data: [DONE]\n\n");
  return out;
}

/** SSE lines of a chat reply that streams forever (`endless`) or stops sending (`stall`). */
function* endlessChatEvents(reply: MockStreamReply, model: string, n: number): Generator<string> {
  const base = {
    id: reply.id ?? `chatcmpl-mock-${n}`,
    object: "chat.completion.chunk",
    created: 0,
    model,
  };
  const line = (delta: Record<string, unknown>) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
  yield line({ role: "assistant", content: "" });
  const key = reply.reasoningKey ?? "reasoning_content";
  for (const r of chunks(reply.reasoning, reply.chunkChars)) yield line({ [key]: r });
  for (const t of chunks(reply.text, reply.chunkChars)) yield line({ content: t });
  if (!reply.endless) return;
  const filler = "x".repeat(64 * 1024);
  if (reply.endless === "tool_arguments") {
    yield line({
      tool_calls: [{
        index: 0,
        id: "endless_call",
        type: "function",
        function: { name: "Shell", arguments: '{"command": "' },
      }],
    });
  }
  for (;;) {
    if (reply.endless === "text") yield line({ content: filler });
    else if (reply.endless === "reasoning") yield line({ [key]: filler });
    else yield line({ tool_calls: [{ index: 0, function: { arguments: filler } }] });
  }
}

/** SSE lines of a streamed Responses API reply. */
function responsesEvents(reply: MockStreamReply, model: string, n: number): string[] {
  const responseId = `resp_mock_${n}`;
  const out: string[] = [];
  let seq = 0;
  const emit = (type: string, fields: Record<string, unknown>) =>
    out.push(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`,
    );
  const response = (status: string, output: unknown[], usage: unknown) => ({
    id: responseId,
    object: "response",
    created_at: 0,
    status,
    model,
    output,
    usage,
  });
  emit("response.created", { response: response("in_progress", [], null) });
  const output: unknown[] = [];
  let index = 0;
  const reasoning = chunks(reply.reasoning, reply.chunkChars);
  if (reasoning.length > 0 || reply.encryptedReasoning !== undefined) {
    const itemId = `rs_mock_${n}`;
    emit("response.output_item.added", {
      output_index: index,
      item: { id: itemId, type: "reasoning", summary: [] },
    });
    if (reasoning.length > 0) {
      emit("response.reasoning_summary_part.added", {
        item_id: itemId,
        output_index: index,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
      for (const r of reasoning) {
        emit("response.reasoning_summary_text.delta", {
          item_id: itemId,
          output_index: index,
          summary_index: 0,
          delta: r,
        });
      }
    }
    const item = {
      id: itemId,
      type: "reasoning",
      summary: reasoning.length ? [{ type: "summary_text", text: reasoning.join("") }] : [],
      encrypted_content: reply.encryptedReasoning ?? null,
    };
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  const text = chunks(reply.text, reply.chunkChars);
  if (text.length > 0) {
    const itemId = reply.id ?? `msg_mock_${n}`;
    emit("response.output_item.added", {
      output_index: index,
      item: { id: itemId, type: "message", role: "assistant", status: "in_progress", content: [] },
    });
    emit("response.content_part.added", {
      item_id: itemId,
      output_index: index,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    });
    for (const t of text) {
      emit("response.output_text.delta", {
        item_id: itemId,
        output_index: index,
        content_index: 0,
        delta: t,
        logprobs: [],
      });
    }
    const full = text.join("");
    emit("response.output_text.done", {
      item_id: itemId,
      output_index: index,
      content_index: 0,
      text: full,
      logprobs: [],
    });
    const item = {
      id: itemId,
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: full, annotations: [] }],
    };
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  for (const tc of reply.toolCalls ?? []) {
    const itemId = `fc_mock_${n}_${index}`;
    const frags = chunks(tc.arguments);
    emit("response.output_item.added", {
      output_index: index,
      item: {
        id: itemId,
        type: "function_call",
        call_id: tc.id,
        name: tc.name,
        arguments: "",
        status: "in_progress",
      },
    });
    for (const f of frags) {
      emit("response.function_call_arguments.delta", {
        item_id: itemId,
        output_index: index,
        delta: f,
      });
    }
    const item = {
      id: itemId,
      type: "function_call",
      call_id: tc.id,
      name: tc.name,
      arguments: frags.join(""),
      status: "completed",
    };
    emit("response.function_call_arguments.done", {
      item_id: itemId,
      output_index: index,
      arguments: item.arguments,
    });
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
    index++;
  }
  const u = reply.usage;
  const usage = u
    ? {
      input_tokens: u.prompt_tokens,
      input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
      output_tokens: u.completion_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: u.prompt_tokens + u.completion_tokens,
    }
    : null;
  emit("response.completed", { response: response("completed", output, usage) });
  return out;
}
