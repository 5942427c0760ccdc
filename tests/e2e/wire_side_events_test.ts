/**
 * Wire e2e: `/btw` side questions (BtwBegin/BtwEnd, protocol 1.9+), `Notification` events for
 * finished background tasks (1.12+, also between turns), and images in `prompt` reaching the
 * model as image parts.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { spawnWire, type WireLine, type WireProcess } from "../helpers/wire_process.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

const events = (lines: WireLine[]) =>
  lines.filter((l) => l.method === "event").map((l) => l.params as { type: string; payload: any });

function init(wire: WireProcess, version: string) {
  return wire.call("init", "initialize", { protocol_version: version });
}

async function contextOf(sb: KimiSandbox): Promise<string> {
  let all = "";
  for (const d of await sb.sessionDirs()) {
    all += await Deno.readTextFile(`${d}/context.jsonl`).catch(() => "");
  }
  return all;
}

async function withSandbox(fn: (sb: KimiSandbox) => Promise<void>): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.cleanup();
  }
}

Deno.test(
  "wire: /btw answers beside the conversation with BtwBegin/BtwEnd",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([
        "text: Main answer.",
        // the side question first tries a tool: refused, then it answers in text
        toolCallLine("b1", "Shell", { command: "rm -rf /" }),
        "text: Side answer: 42.",
      ]);
      const wire = spawnWire(sb, ["--config-file", config]);
      try {
        await init(wire, "1.10");
        await wire.call("p1", "prompt", { user_input: "main question" });
        const { lines, response } = await wire.call("p2", "prompt", {
          user_input: "/btw what is the answer?",
        });
        assertEquals(response.result.status, "finished");
        const evs = events(lines);
        const begin = evs.find((e) => e.type === "BtwBegin")!;
        const end = evs.find((e) => e.type === "BtwEnd")!;
        assert(begin && end, `btw events: ${JSON.stringify(evs.map((e) => e.type))}`);
        assertEquals(begin.payload.question, "what is the answer?");
        assertEquals(end.payload, {
          id: begin.payload.id,
          response: "Side answer: 42.",
          error: null,
        });
        assert(/^[0-9a-f]{12}$/.test(begin.payload.id));
        // no tool ran, and nothing of the side question entered the conversation
        assert(!evs.some((e) => e.type === "ToolResult" || e.type === "ApprovalRequest"));
        assert(!lines.some((l) => l.method === "request"));
        const ctx = await contextOf(sb);
        assertStringIncludes(ctx, "Main answer.");
        assert(!ctx.includes("Side answer"), ctx);
        assert(!ctx.includes("what is the answer?"), ctx);
      } finally {
        await wire.finish();
      }
    }),
);

Deno.test(
  "wire: /btw events are not sent to 1.8 clients; errors arrive in BtwEnd",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig(["text: hidden from old clients"]);
      const old = spawnWire(sb, ["--config-file", config]);
      try {
        await init(old, "1.8");
        const { lines, response } = await old.call("p", "prompt", { user_input: "/btw anything?" });
        assertEquals(response.result.status, "finished");
        const types = events(lines).map((e) => e.type);
        assert(!types.includes("BtwBegin") && !types.includes("BtwEnd"), types.join(","));
        assertEquals(types[0], "TurnBegin");
      } finally {
        await old.finish();
      }
      // no script: the provider fails and the error is reported in BtwEnd
      const fresh = spawnWire(sb, ["--config-file", await sb.scriptedConfig([])]);
      try {
        await init(fresh, "1.12");
        const { lines } = await fresh.call("p", "prompt", { user_input: "/btw again?" });
        const end = events(lines).find((e) => e.type === "BtwEnd")!;
        assertEquals(end.payload.response, null);
        assert(typeof end.payload.error === "string" && end.payload.error.length > 0);
        const usage = events(lines).find((e) => e.type === "ContentPart");
        assertEquals(usage, undefined);
      } finally {
        await fresh.finish();
      }
    }),
);

/** A background Shell call that waits for `<work>/go` before finishing. */
const BACKGROUND = toolCallLine("bg1", "Shell", {
  command: "while [ ! -f go ]; do sleep 0.05; done; echo bg-output-77",
  run_in_background: true,
  description: "wait for go",
});

Deno.test(
  "wire: a finished background task sends Notification to 1.12 clients between turns, and the model gets it next step",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([
        BACKGROUND,
        "text: Started it.",
        "text: Noted the result.",
      ]);
      const wire = spawnWire(sb, ["--config-file", config, "--yolo"]);
      try {
        await init(wire, "1.12");
        const { response } = await wire.call("p1", "prompt", { user_input: "start it" });
        assertEquals(response.result.status, "finished");
        // idle between turns: the task finishes and the client is told
        await Deno.writeTextFile(`${sb.workDir}/go`, "");
        let note: WireLine;
        do note = await wire.next(); while (note.params?.type !== "Notification");
        const p = note.params.payload;
        assertEquals(p.category, "task");
        assertEquals(p.type, "task.completed");
        assertEquals(p.source_kind, "background_task");
        assertEquals(p.severity, "success");
        assertEquals(p.title, "Background task completed: wait for go");
        assertStringIncludes(p.body, "bg-output-77");
        assertEquals(p.payload.task_id, p.source_id);
        assertEquals(p.payload.exit_code, 0);
        assert(typeof p.created_at === "number" && typeof p.id === "string");
        // the next step tells the model, under the same id
        await wire.call("p2", "prompt", { user_input: "what happened?" });
        const ctx = await contextOf(sb);
        assertStringIncludes(ctx, `<notification id=\\"${p.id}\\"`);
        // recorded in wire.jsonl, so replay shows it
        const [dir] = await sb.sessionDirs();
        const recorded = (await Deno.readTextFile(`${dir}/wire.jsonl`)).split("\n")
          .filter((l) => l.includes('"Notification"'));
        assertEquals(recorded.length, 1);
        assertEquals(JSON.parse(recorded[0]).message.payload.id, p.id);
        assertStringIncludes(ctx, 'type=\\"task.completed\\"');
        assertStringIncludes(ctx, "bg-output-77");
      } finally {
        await wire.finish();
      }
    }),
);

Deno.test(
  "wire: 1.9 clients get no Notification event (the model still does)",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([BACKGROUND, "text: Started.", "text: Seen."]);
      const wire = spawnWire(sb, ["--config-file", config, "--yolo"]);
      try {
        await init(wire, "1.9");
        await wire.call("p1", "prompt", { user_input: "start it" });
        await Deno.writeTextFile(`${sb.workDir}/go`, "");
        // wait until the task is recorded as finished
        const tasks = async () => {
          // a task folder holds its state files; one of them says it completed
          for (const d of await sb.sessionDirs()) {
            for await (const t of Deno.readDir(`${d}/tasks`)) {
              for await (const f of Deno.readDir(`${d}/tasks/${t.name}`)) {
                if (!f.name.endsWith(".json")) continue;
                const rec = await Deno.readTextFile(`${d}/tasks/${t.name}/${f.name}`).catch(() =>
                  ""
                );
                if (/"status":\s*"completed"/.test(rec)) return true;
              }
            }
          }
          return false;
        };
        const deadline = Date.now() + 60_000; // a guard against hanging, not a timing assertion
        while (!(await tasks())) {
          if (Date.now() > deadline) throw new Error("the background task never completed");
          await new Promise((r) => setTimeout(r, 50));
        }
        await wire.call("p2", "prompt", { user_input: "and now?" });
        assert(!events(wire.seen).some((e) => e.type === "Notification"));
        assertStringIncludes(await contextOf(sb), "<notification id=");
      } finally {
        await wire.finish();
      }
    }),
);

Deno.test(
  "wire: an image in prompt reaches the model as an image part",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        const config = await sb.openaiConfig(mock.url, { capabilities: ["image_in"] });
        const wire = spawnWire(sb, ["--config-file", config]);
        try {
          await init(wire, "1.12");
          const url = "data:image/png;base64,iVBORw0KGgo=";
          const { response } = await wire.call("p", "prompt", {
            user_input: [
              { type: "text", text: "what is in this picture?" },
              { type: "image_url", image_url: { url, id: null } },
            ],
          });
          assertEquals(response.result.status, "finished");
          const user = mock.requests.at(-1)!.body.messages.find((m: any) => m.role === "user");
          assertEquals(user.content, [
            { type: "text", text: "what is in this picture?" },
            { type: "image_url", image_url: { url } },
          ]);
        } finally {
          await wire.finish();
        }
      } finally {
        await mock.close();
      }
    }),
);
