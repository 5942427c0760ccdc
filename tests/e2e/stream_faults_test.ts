/**
 * Faults at the model stream, end to end through `main.ts --print` against the mock
 * OpenAI-compatible server: a stream that never ends (text, thinking, tool-call arguments) is cut
 * while memory stays bounded, a stalled stream is retried, SIGINT stops a hung stream, and an
 * HTML 502 page is reported as its status and title.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";

type Rec = { type: string; payload: any };

async function wireRecords(dir: string): Promise<Rec[]> {
  const text = await Deno.readTextFile(`${dir}/wire.jsonl`);
  return text.trim().split("\n").slice(1).map((l) => JSON.parse(l).message as Rec);
}

/** Peak resident set (VmHWM) of a live process in KiB, or null once it is gone. */
async function peakRssKiB(pid: number): Promise<number | null> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    const m = status.match(/^VmHWM:\s+(\d+) kB/m);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The RSS ceiling a kimi process must stay under while a mock streams forever. */
const RSS_CEILING_KIB = 400 * 1024;

Deno.test("an endless text stream is cut at the default limit, retried, exits 75, RSS bounded", async () => {
  const mock = await startMockOpenAI({ defaultReply: { text: "start ", endless: "text" } });
  const sb = await kimiSandbox();
  try {
    const config = await sb.openaiConfig(mock.url, {
      extra: { loop_control: { max_retries_per_step: 2 } },
    });
    let peak = 0;
    let killedForMemory = false;
    let watching = true;
    const watch = (child: Deno.ChildProcess) => {
      (async () => {
        while (watching) {
          const kib = await peakRssKiB(child.pid);
          if (kib === null) break;
          peak = Math.max(peak, kib);
          if (kib > RSS_CEILING_KIB) {
            killedForMemory = true;
            child.kill("SIGKILL");
            break;
          }
          await new Promise((r) => setTimeout(r, 25));
        }
      })();
    };
    const r = await sb.run(["--print", "--config-file", config, "-p", "talk forever"], {
      onSpawn: watch,
    });
    watching = false;
    assert(!killedForMemory, `RSS passed the ceiling: ${peak} KiB`);
    assert(peak > 0 && peak < RSS_CEILING_KIB, `peak RSS ${peak} KiB`);
    assertEquals(r.code, 75, r.stdout + r.stderr);
    // 100k-token model: the limit is sized at 1 MiB.
    assertStringIncludes(
      r.stdout,
      "The model's response was cut: its text passed 1 MiB. Raise model_stream.max_text_bytes " +
        "in the config if such long output is expected.",
    );
    assertEquals(mock.requests.length, 2, "one retry (max_retries_per_step = 2)");
    const [dir] = await sb.sessionDirs();
    const recs = await wireRecords(dir);
    const retry = recs.find((m) => m.type === "StepRetry");
    assertEquals(retry?.payload.error_type, "APIStreamLimitError");
    assert(recs.some((m) => m.type === "StepInterrupted"));
    // The cut response never reaches the context: no half-message is kept.
    const ctx = await Deno.readTextFile(`${dir}/context.jsonl`);
    assert(!ctx.includes('"role":"assistant"') && !ctx.includes('"role": "assistant"'), ctx);
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

Deno.test("endless thinking and endless tool-call arguments are cut at configured limits", async () => {
  const mock = await startMockOpenAI();
  const sb = await kimiSandbox();
  try {
    const config = await sb.openaiConfig(mock.url, {
      capabilities: ["thinking"],
      extra: {
        loop_control: { max_retries_per_step: 1 },
        model_stream: { max_thinking_bytes: 256 * 1024, max_tool_arguments_bytes: 512 * 1024 },
      },
    });
    mock.enqueue({ endless: "reasoning" });
    const a = await sb.run(["--print", "--thinking", "--config-file", config, "-p", "think"]);
    assertEquals(a.code, 75, a.stdout + a.stderr);
    assertStringIncludes(
      a.stdout,
      "its thinking passed 256 KiB. Raise model_stream.max_thinking_bytes",
    );

    mock.enqueue({ text: "Let me run it.", endless: "tool_arguments" });
    const b = await sb.run(["--print", "--yolo", "--config-file", config, "-p", "call"]);
    assertEquals(b.code, 75, b.stdout + b.stderr);
    assertStringIncludes(
      b.stdout,
      "its tool-call arguments passed 512 KiB. Raise model_stream.max_tool_arguments_bytes",
    );
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

Deno.test("a stalled stream is abandoned and retried like a lost connection", async () => {
  const mock = await startMockOpenAI();
  const sb = await kimiSandbox();
  try {
    mock.enqueue({ text: "half a thou", stall: true }, { text: "Recovered." });
    const config = await sb.openaiConfig(mock.url, {
      extra: { model_stream: { stall_timeout_s: 1 } },
    });
    const r = await sb.run(["--print", "--config-file", config, "-p", "hello"]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertStringIncludes(r.stdout, "Recovered.");
    assertEquals(mock.requests.length, 2);
    const [dir] = await sb.sessionDirs();
    const retry = (await wireRecords(dir)).find((m) => m.type === "StepRetry");
    assertEquals(retry?.payload.error_type, "APITimeoutError");

    // Stalling on every attempt: a retryable failure, exit 75, the stall named.
    mock.enqueue({ text: "a", stall: true }, { text: "b", stall: true }, {
      text: "c",
      stall: true,
    });
    const s = await sb.run(["--print", "--config-file", config, "-p", "again"]);
    assertEquals(s.code, 75, s.stdout + s.stderr);
    assertStringIncludes(
      s.stdout,
      "The model stream stalled: no data for 1 s (model_stream.stall_timeout_s).",
    );
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

Deno.test("SIGINT during a hung stream stops the run at once (exit 1, Interrupted by user)", async () => {
  const mock = await startMockOpenAI({ defaultReply: { text: "thinking about it", stall: true } });
  const sb = await kimiSandbox();
  try {
    const config = await sb.openaiConfig(mock.url, {
      extra: { model_stream: { stall_timeout_s: 3600 } },
    });
    const r = await sb.run(["--print", "--config-file", config, "-p", "wait"], {
      onSpawn: (child) => {
        (async () => {
          // Interrupt once the request is in flight (the stall would otherwise last an hour).
          while (mock.requests.length === 0) await new Promise((res) => setTimeout(res, 20));
          await new Promise((res) => setTimeout(res, 200));
          child.kill("SIGINT");
        })();
      },
    });
    assertEquals(r.code, 1, r.stdout + r.stderr);
    assertStringIncludes(r.stdout, "Interrupted by user");
    assertEquals(mock.requests.length, 1);
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

Deno.test("an HTML 502 page is reported as its status and title, not as markup", async () => {
  const mock = await startMockOpenAI();
  const sb = await kimiSandbox();
  try {
    const page = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">' +
      "<title>502 Bad Gateway</title><style>" + "body{margin:0}".repeat(500) +
      "</style></head><body><h1>Bad Gateway</h1>" +
      "<p>The upstream server did not answer.</p>".repeat(800) + "</body></html>";
    assert(page.length > 34_000);
    mock.enqueue({ status: 502, body: page }, { status: 502, body: page });
    const config = await sb.openaiConfig(mock.url, {
      extra: { loop_control: { max_retries_per_step: 2 } },
    });
    const r = await sb.run(["--print", "--config-file", config, "-p", "hello"]);
    assertEquals(r.code, 75, r.stdout + r.stderr);
    assertEquals(
      r.stdout.trim().split("\n").at(-1),
      "HTTP 502: 502 Bad Gateway (an HTML error page, not an API response: the provider or a " +
        "proxy in front of it failed; retry later, or check the provider's base_url)",
    );
    assert(!r.stdout.includes("<"), "no markup printed");
    assert(r.stdout.length < 1000, `stdout is ${r.stdout.length} chars`);
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});
