/**
 * The incremental request history equals normalizing the whole history at every step, whatever
 * the appends (tool calls answered late or never, runs of user messages, notifications,
 * reminders), and starts over when the context replaces its history (clear, revert).
 */
import { assertEquals } from "../../helpers/assert.ts";
import type { NormalizedMessage } from "../../../lib/llm/message.ts";
import { estimateRequestMessageTokens } from "../../../lib/llm/token_estimate.ts";
import { normalizeHistory, RequestHistory } from "../../../lib/soul/request_history.ts";

const text = (role: "user" | "assistant", t: string): NormalizedMessage => ({
  role,
  content: [{ type: "text", text: t }],
});

function randomMessage(rand: (n: number) => number, i: number, open: string[]): NormalizedMessage {
  switch (rand(7)) {
    case 0:
      return text("user", `u${i}`);
    case 1:
      return text("user", `<notification id="n${i}">done</notification>`);
    case 2: {
      const ids = Array.from({ length: 1 + rand(3) }, (_, k) => `c${i}_${k}`);
      open.push(...ids);
      return {
        role: "assistant",
        content: [{ type: "text", text: `a${i}` }],
        tool_calls: ids.map((id) => ({
          type: "function" as const,
          id,
          function: { name: "Shell", arguments: `{"command":"echo ${i}"}` },
          extras: null,
        })),
      };
    }
    case 3:
    case 4: {
      const id = open.length > 0 && rand(4) > 0 ? open.splice(rand(open.length), 1)[0] : `x${i}`;
      return { role: "tool", content: [{ type: "text", text: `r${i}` }], tool_call_id: id };
    }
    case 5:
      return text("assistant", `a${i}`);
    default:
      return text("user", `<system-reminder>r${i}</system-reminder>`);
  }
}

Deno.test("RequestHistory equals a full normalization after every append", () => {
  let seed = 12345;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  for (let run = 0; run < 40; run++) {
    const history: NormalizedMessage[] = [];
    const built = new RequestHistory();
    const open: string[] = [];
    for (let i = 0; i < 120; i++) {
      for (let k = rand(3); k >= 0; k--) history.push(randomMessage(rand, i * 10 + k, open));
      const extra = rand(2) === 0 ? [text("user", `<system-reminder>x${i}</system-reminder>`)] : [];
      const got = built.build(history, extra);
      const want = normalizeHistory([...history, ...extra]);
      assertEquals(got.messages, want, `run ${run}, step ${i}`);
      assertEquals(got.tokens, want.reduce((n, m) => n + estimateRequestMessageTokens(m), 0));
    }
  }
});

Deno.test("RequestHistory starts over when the history array is replaced", () => {
  const built = new RequestHistory();
  const first = [text("user", "a"), text("assistant", "b"), text("user", "c")];
  assertEquals(built.build(first).messages, normalizeHistory(first));
  const second = [text("user", "x")];
  assertEquals(built.build(second).messages, second);
  second.push(text("user", "y"));
  assertEquals(built.build(second).messages, normalizeHistory(second));
});
