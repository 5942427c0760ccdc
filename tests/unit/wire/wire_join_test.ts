/**
 * A streamed reply is joined once: `generate` takes the string the wire joined for its merged
 * event of a text part that ended at another kind of part (`joinText` → `Wire.takeJoinedText`),
 * and the wire takes the message's string for the reply's last text part (`Wire.adoptText`), as
 * the soul wires them. The message, the raw and the merged events are exactly what separate joins
 * give; a text that does not match is never taken.
 */
import { assertEquals } from "../../helpers/assert.ts";
import { generate } from "../../../lib/llm/generate.ts";
import type { ChatProvider, ChatStream, StreamPart } from "../../../lib/llm/provider.ts";
import { Wire } from "../../../lib/wire/channel.ts";
import { event, partEvent, type WireMessage } from "../../../lib/wire/messages.ts";

function provider(parts: StreamPart[]): ChatProvider {
  const p: ChatProvider = {
    name: "fake",
    modelName: "fake-model",
    thinkingEffort: null,
    generate(): Promise<ChatStream> {
      return Promise.resolve({
        id: "r1",
        usage: null,
        async *[Symbol.asyncIterator]() {
          for (const part of parts) yield part;
        },
      });
    },
    withThinking: () => p,
  };
  return p;
}

async function drain(sub: AsyncIterable<WireMessage>): Promise<WireMessage[]> {
  const out: WireMessage[] = [];
  for await (const m of sub) out.push(m);
  return out;
}

const text = (t: string): StreamPart => ({ type: "text", text: t });
const think = (t: string): StreamPart => ({ type: "think", think: t, encrypted: null });

Deno.test("generate + wire: each text and think part is joined once and the results are unchanged", async () => {
  const call: StreamPart = {
    type: "function",
    id: "c1",
    function: { name: "Shell", arguments: null },
    extras: null,
  };
  const parts: StreamPart[] = [
    text("Here "),
    text("is é😀 "),
    text("the plan."),
    call,
    { arguments_part: '{"command": "ls"}' },
    text("Then "),
    text("more."),
    think("hm"),
    think("m"),
    text("Done "),
    text("now."),
  ];
  for (const interleavedSend of [false, true]) {
    const wire = new Wire();
    const merged = drain(wire.subscribe({ merge: true }));
    const raw = drain(wire.subscribe({ merge: false }));
    const taken: (string | undefined)[] = [];
    const result = await generate(provider(parts), { systemPrompt: "", tools: [], history: [] }, {
      onPart: (p) => {
        wire.send(partEvent(p));
        // another emitter's event (a tool's result) between a part and its join
        if (interleavedSend && "function" in p) wire.send(event("StepBegin", { n: 9 }));
      },
      joinText: (pieces) => {
        const t = wire.takeJoinedText(pieces);
        taken.push(t);
        return t;
      },
    });
    const last = result.message.content.at(-1);
    if (last?.type === "text") wire.adoptText(last.text);
    wire.send(event("StepBegin", { n: 2 }));
    wire.shutdown();

    assertEquals(result.message.content, [
      { type: "text", text: "Here is é😀 the plan." },
      { type: "text", text: "Then more." },
      { type: "think", think: "hmm", encrypted: null },
      { type: "text", text: "Done now." },
    ]);
    assertEquals(result.message.tool_calls, [
      { ...call, function: { name: "Shell", arguments: '{"command": "ls"}' } } as never,
    ]);
    // the first text part's join was dropped by the send in between: joined by generate instead
    assertEquals(taken, [
      interleavedSend ? undefined : "Here is é😀 the plan.",
      "Then more.",
      "hmm", // a think part too
      undefined, // the last part: the wire has not published it yet, it adopts generate's
    ]);
    const callMerged = { ...call, function: { name: "Shell", arguments: '{"command": "ls"}' } };
    assertEquals((await merged).map((m) => m.payload), [
      { type: "text", text: "Here is é😀 the plan." },
      // the event in between ends the merged call before its arguments come
      ...(interleavedSend
        ? [call, { n: 9 }, { arguments_part: '{"command": "ls"}' }]
        : [callMerged]),
      { type: "text", text: "Then more." },
      { type: "think", think: "hmm", encrypted: null },
      { type: "text", text: "Done now." },
      { n: 2 },
    ]);
    assertEquals(
      (await raw).filter((m) => m.type !== "StepBegin").map((m) => m.payload),
      parts,
    );
  }
});

Deno.test("wire.takeJoinedText: only the text of exactly these pieces, once, until the next send", () => {
  const pieces = ["ab", "cd", "ef"];
  const setup = () => {
    const wire = new Wire();
    wire.subscribe({ merge: true });
    for (const t of pieces) wire.send(partEvent({ type: "text", text: t }));
    wire.send(partEvent({ type: "think", think: "x", encrypted: null })); // publishes "abcdef"
    return { wire };
  };
  let { wire } = setup();
  assertEquals(wire.takeJoinedText(["ab", "cd", "eX"]), undefined); // other text
  ({ wire } = setup());
  assertEquals(wire.takeJoinedText(["ab", "cd"]), undefined); // a prefix
  ({ wire } = setup());
  assertEquals(wire.takeJoinedText(["ab", "cd", "ef", "g"]), undefined); // longer
  ({ wire } = setup());
  assertEquals(wire.takeJoinedText(["a", "bcde", "f"]), "abcdef"); // same text, other cuts
  ({ wire } = setup());
  assertEquals(wire.takeJoinedText(pieces), "abcdef");
  assertEquals(wire.takeJoinedText(pieces), undefined); // taken once
  ({ wire } = setup());
  wire.send(event("StepBegin", { n: 1 }));
  assertEquals(wire.takeJoinedText(pieces), undefined); // gone with the next send
  // a single-piece text part is not joined: nothing to take
  const solo = new Wire();
  solo.subscribe({ merge: true });
  solo.send(partEvent({ type: "text", text: "abcdef" }));
  solo.send(event("StepBegin", { n: 1 }));
  assertEquals(solo.takeJoinedText(["abcdef"]), undefined);
  solo.shutdown();
  wire.shutdown();
});

Deno.test("generate + wire: think pieces up to an encrypted one merge, the reply's last think is shared", async () => {
  const pieces = Array.from({ length: 300 }, (_, i) => `t${i};`);
  const parts: StreamPart[] = [
    ...pieces.slice(0, 200).map(think),
    { type: "think", think: "sig!", encrypted: "SIG" },
    think("after"), // not merged into an encrypted part
    think(" more"),
    text("answer"),
    ...pieces.slice(200).map(think),
  ];
  const wire = new Wire();
  const merged = drain(wire.subscribe({ merge: true }));
  const taken: (string | undefined)[] = [];
  const result = await generate(provider(parts), { systemPrompt: "", tools: [], history: [] }, {
    onPart: (p) => wire.send(partEvent(p)),
    joinText: (ps) => {
      const t = wire.takeJoinedText(ps);
      taken.push(t);
      return t;
    },
  });
  const last = result.message.content.at(-1);
  if (last?.type === "think") wire.adoptText(last.think);
  wire.send(event("StepBegin", { n: 2 }));
  wire.shutdown();
  const first = pieces.slice(0, 200).join("") + "sig!";
  const tail = pieces.slice(200).join("");
  assertEquals(result.message.content, [
    { type: "think", think: first, encrypted: "SIG" },
    { type: "think", think: "after more", encrypted: null },
    { type: "text", text: "answer" },
    { type: "think", think: tail, encrypted: null },
  ]);
  assertEquals(taken, [first, "after more", undefined]);
  assertEquals((await merged).map((m) => m.payload), [
    ...result.message.content,
    { n: 2 },
  ]);
});
