import { assertEquals } from "../../helpers/assert.ts";
import {
  type FeedbackPayload,
  feedbackUrl,
  osDescription,
  submitFeedback,
} from "../../../lib/auth/kimi_code_feedback.ts";
import { failureLine } from "../../../lib/ui/shell/commands/feedback.ts";

const payload: FeedbackPayload = {
  session_id: "s-1",
  content: "nice",
  version: "1.49.0",
  os: "Linux 6.1",
  model: null,
};

/** A fetch that records calls and answers from `answer`. */
function recorder(answer: (auth: string) => Response | Promise<Response>) {
  const calls: { url: string; auth: string; body: unknown }[] = [];
  const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const auth = new Headers(init?.headers).get("authorization") ?? "";
    calls.push({ url: String(input), auth, body: JSON.parse(String(init?.body)) });
    return await answer(auth);
  }) as typeof fetch;
  return { calls, fetch: f };
}

Deno.test("feedback: URL, OS text as Python names it", () => {
  assertEquals(
    feedbackUrl("https://api.kimi.com/coding/v1//"),
    "https://api.kimi.com/coding/v1/feedback",
  );
  assertEquals(osDescription("linux", () => "6.8.0"), "Linux 6.8.0");
  assertEquals(osDescription("darwin", () => "23.1.0"), "Darwin 23.1.0");
  assertEquals(osDescription("windows", () => "10.0.22631"), "Windows 10.0.22631");
  assertEquals(
    osDescription("freebsd", () => {
      throw new Deno.errors.NotCapable("no --allow-sys");
    }),
    "Freebsd",
  );
});

Deno.test("feedback: 2xx is submitted, other statuses are HTTP failures", async () => {
  for (const [status, kind] of [[200, "submitted"], [204, "submitted"], [500, "http"]] as const) {
    const r = recorder(() => new Response(status === 204 ? null : "{}", { status }));
    const out = await submitFeedback({
      baseUrl: "http://x/coding/v1",
      accessToken: "tok",
      payload,
      fetch: r.fetch,
    });
    assertEquals(out.kind, kind);
    assertEquals(r.calls, [{
      url: "http://x/coding/v1/feedback",
      auth: "Bearer tok",
      body: payload,
    }]);
  }
  assertEquals(failureLine({ kind: "http", status: 500 }), "Failed to submit feedback (HTTP 500).");
});

Deno.test("feedback: a 401 is retried once with a refreshed token", async () => {
  const r = recorder((auth) => new Response("{}", { status: auth === "Bearer new" ? 200 : 401 }));
  let refreshed = 0;
  const out = await submitFeedback({
    baseUrl: "http://x",
    accessToken: "old",
    refreshToken: () => {
      refreshed++;
      return Promise.resolve("new");
    },
    payload,
    fetch: r.fetch,
  });
  assertEquals(out, { kind: "submitted" });
  assertEquals(r.calls.map((c) => c.auth), ["Bearer old", "Bearer new"]);
  assertEquals(refreshed, 1);
  // a refresh that fails leaves the 401
  const r2 = recorder(() => new Response("{}", { status: 401 }));
  const out2 = await submitFeedback({
    baseUrl: "http://x",
    accessToken: "old",
    refreshToken: () => Promise.reject(new Error("revoked")),
    payload,
    fetch: r2.fetch,
  });
  assertEquals(out2, { kind: "http", status: 401 });
  assertEquals(r2.calls.length, 1);
});

Deno.test("feedback: timeout, network error, a host this run may not reach, Ctrl-C", async () => {
  const never =
    ((_: RequestInfo | URL, init?: RequestInit) =>
      new Promise<Response>((_, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal!.reason));
      })) as typeof fetch;
  const timeout = await submitFeedback({
    baseUrl: "http://x",
    accessToken: "t",
    payload,
    fetch: never,
    timeoutMs: 1,
  });
  assertEquals(timeout, { kind: "timeout" });
  assertEquals(failureLine(timeout), "Feedback submission timed out.");

  const ac = new AbortController();
  const pending = submitFeedback({
    baseUrl: "http://x",
    accessToken: "t",
    payload,
    fetch: never,
    signal: ac.signal,
  });
  ac.abort();
  assertEquals(await pending, { kind: "cancelled" });

  const refused = await submitFeedback({
    baseUrl: "http://x",
    accessToken: "secret-token",
    payload,
    fetch: (() => Promise.reject(new TypeError("connection refused"))) as typeof fetch,
  });
  assertEquals(refused, { kind: "network", denied: null });
  assertEquals(failureLine(refused), "Network error, failed to submit feedback.");

  const denied = await submitFeedback({
    baseUrl: "https://api.kimi.com/coding/v1",
    accessToken: "secret-token",
    payload,
    fetch: (() => Promise.reject(new Deno.errors.NotCapable("net"))) as typeof fetch,
  });
  assertEquals(denied, { kind: "network", denied: "api.kimi.com" });
  assertEquals(
    failureLine(denied),
    "Network error, failed to submit feedback. This run has no network access to api.kimi.com; " +
      "restart kimi with --allow-net=api.kimi.com (or `deno task workspace`) to send it from here.",
  );
});
