import { assert, assertEquals, assertThrows } from "../../helpers/assert.ts";
import { parseChoice } from "../../../lib/flows/choice.ts";
import { parseD2Flowchart } from "../../../lib/flows/d2.ts";
import { type Flow, FlowParseError, FlowValidationError } from "../../../lib/flows/flow.ts";
import { fencedCodeBlocks, parseFlowFromMarkdown } from "../../../lib/flows/markdown.ts";
import { parseMermaidFlowchart } from "../../../lib/flows/mermaid.ts";
import {
  decisionPrompt,
  FlowRunner,
  INVALID_CHOICE_SUFFIX,
} from "../../../lib/soul/flow_runner.ts";
import type { TurnResult } from "../../../lib/soul/turn.ts";
import type { ContentPart } from "../../../lib/llm/message.ts";
import { MaxStepsReached } from "../../../lib/soul/errors.ts";

function throwsMessage(fn: () => unknown, cls: new (...a: never[]) => Error, message: string) {
  try {
    fn();
  } catch (err) {
    assert(err instanceof cls, `expected ${cls.name}, got ${err}`);
    assertEquals(err.message, message);
    return;
  }
  throw new Error(`expected ${cls.name}: ${message}`);
}

Deno.test("mermaid golden: begin, task, decision inferred from two labeled edges, end", () => {
  const flow = parseMermaidFlowchart(
    "flowchart TD\n" +
      "A([BEGIN]) --> B[Search stdrc]; B --> C{Enough?}; C -->|yes| D([END]); C -->|no| B\n",
  );
  assertEquals(
    flow,
    {
      nodes: {
        A: { id: "A", label: "BEGIN", kind: "begin" },
        B: { id: "B", label: "Search stdrc", kind: "task" },
        C: { id: "C", label: "Enough?", kind: "decision" },
        D: { id: "D", label: "END", kind: "end" },
      },
      outgoing: {
        A: [{ src: "A", dst: "B", label: null }],
        B: [{ src: "B", dst: "C", label: null }],
        C: [{ src: "C", dst: "D", label: "yes" }, { src: "C", dst: "B", label: "no" }],
        D: [],
      },
      beginId: "A",
      endId: "D",
    } satisfies Flow,
  );
});

Deno.test("mermaid: the same golden one statement per line, with ignored lines and comments", () => {
  const flow = parseMermaidFlowchart([
    "graph LR",
    "%% a comment",
    "classDef hot fill:#f00",
    "A([BEGIN]) --> B[Search stdrc]:::hot",
    "subgraph inner",
    "B --> C{Enough?}",
    "end",
    "C -- yes --> D([END])",
    "C -.->|no| B",
    "style B fill:#0f0",
    "linkStyle 0 stroke:#00f",
    "click B callback",
    "direction TB",
    "class B hot",
  ].join("\n"));
  assertEquals(flow.nodes.C.kind, "decision");
  assertEquals(flow.outgoing.C, [
    { src: "C", dst: "D", label: "yes" },
    { src: "C", dst: "B", label: "no" },
  ]);
  assertEquals(flow.nodes.B, { id: "B", label: "Search stdrc", kind: "task" });
});

Deno.test("mermaid: shapes, quoted labels with escapes, arrows, chains, bare ids", () => {
  const flow = parseMermaidFlowchart(
    [
      'start(["begin"]) ==> a["a | b \\"quoted\\""]',
      "a --- b(round) -.-> c",
      "c --> finish((END))",
    ].join("\n").replace("((END))", "([End])"),
  );
  assertEquals(flow.nodes.start.kind, "begin");
  assertEquals(flow.nodes.a.label, 'a | b "quoted"');
  assertEquals(flow.nodes.b.label, "round");
  assertEquals(flow.nodes.c, { id: "c", label: "c", kind: "task" });
  assertEquals(flow.nodes.finish.kind, "end");
  assertEquals(flow.outgoing.b, [{ src: "b", dst: "c", label: null }]);
});

Deno.test("mermaid: implicit references keep the explicit label; a different label conflicts", () => {
  const ok = parseMermaidFlowchart("B --> C([END])\nA([BEGIN]) --> B[Work]\nB");
  assertEquals(ok.nodes.B.label, "Work");
  throwsMessage(
    () => parseMermaidFlowchart("A([BEGIN]) --> B[Work]\nB[Other] --> C([END])"),
    FlowParseError,
    'Line 2: Conflicting definition for node "B"',
  );
});

Deno.test("mermaid: syntax error messages", () => {
  const cases: Array<[string, string]> = [
    ["A([BEGIN]) --> ", "Line 1: Expected node id"],
    ["A[unclosed --> B", "Line 1: Unclosed node label"],
    ['A["open --> B', "Line 1: Unclosed quoted label"],
    ["A[ ] --> B", "Line 1: Node label cannot be empty"],
    ["A -->|yes B", "Line 1: Unclosed edge label"],
    ["A -->| | B", "Line 1: Edge label cannot be empty"],
    ["A -- yes B", "Line 1: Expected '-->' to end edge label"],
    ["graph\nA B", "Line 2: Unexpected trailing content"],
    ["A([BEGIN]) <-- B", "Line 1: Expected edge arrow"],
    ["A([x)", "Line 1: Unclosed node label"],
  ];
  for (const [text, message] of cases) {
    throwsMessage(() => parseMermaidFlowchart(text), FlowParseError, message);
  }
});

Deno.test("validation messages (shared by both syntaxes)", () => {
  const cases: Array<[string, string]> = [
    ["A[Work] --> B([END])", "Expected exactly one BEGIN node, found 0"],
    ["A([BEGIN]) --> B([begin]) --> C([END])", "Expected exactly one BEGIN node, found 2"],
    ["A([BEGIN]) --> B[Work]", "Expected exactly one END node, found 0"],
    ["A([BEGIN]) --> B[Work] --> C([END])\nB --> D[x]", 'Node "B" has an unlabeled edge'],
    [
      "A([BEGIN]) --> B[Work]\nB -->|x| C([END])\nB -->|x| D[y]",
      'Node "B" has duplicate edge labels',
    ],
    ["A([BEGIN]) --> B[Work] --> B\nC([END])", "END node is not reachable from BEGIN"],
  ];
  for (const [text, message] of cases) {
    throwsMessage(() => parseMermaidFlowchart(text), FlowValidationError, message);
  }
  // Only nodes reachable from BEGIN are checked for labels.
  const flow = parseMermaidFlowchart("A([BEGIN]) --> E([END])\nX[orphan] --> Y\nX --> Z");
  assertEquals(flow.nodes.X.kind, "decision");
  throwsMessage(
    () => parseD2Flowchart("a: BEGIN\nb: Work\na -> b"),
    FlowValidationError,
    "Expected exactly one END node, found 0",
  );
});

const D2_GOLDEN = `# Research loop
begin: BEGIN
search: |md
    # Search
    Look up "stdrc" in the docs \\ notes.
|
enough: 'Enough?' {
  shape: diamond
}
done: "END"
begin -> search -> enough
enough -> done: yes
enough -> search: "no"
search.style.fill: "#eee"
enough.shape: diamond
long: \\
  Wrap up
`;

Deno.test("d2 golden: markdown block label, chain, last-hop label, properties, comments", () => {
  const flow = parseD2Flowchart(D2_GOLDEN.replace("long: \\\n  Wrap up\n", ""));
  assertEquals(
    flow,
    {
      nodes: {
        begin: { id: "begin", label: "BEGIN", kind: "begin" },
        search: {
          id: "search",
          label: '# Search\nLook up "stdrc" in the docs \\ notes.',
          kind: "task",
        },
        enough: { id: "enough", label: "Enough?", kind: "decision" },
        done: { id: "done", label: "END", kind: "end" },
      },
      outgoing: {
        begin: [{ src: "begin", dst: "search", label: null }],
        search: [{ src: "search", dst: "enough", label: null }],
        enough: [
          { src: "enough", dst: "done", label: "yes" },
          { src: "enough", dst: "search", label: "no" },
        ],
        done: [],
      },
      beginId: "begin",
      endId: "done",
    } satisfies Flow,
  );
});

Deno.test("d2: line continuation and chain labels apply to the last hop only", () => {
  const flow = parseD2Flowchart("a: BEGIN\nz: \\\n  END\na -> m -> z: finish\n");
  assertEquals(flow.nodes.z.kind, "end");
  assertEquals(flow.outgoing.a, [{ src: "a", dst: "m", label: null }]);
  assertEquals(flow.outgoing.m, [{ src: "m", dst: "z", label: "finish" }]);
});

Deno.test("d2: error messages", () => {
  const cases: Array<[string, string]> = [
    ["a: |md\n  text\n", "Line 1: Unclosed markdown block"],
    ["a: BEGIN\n}\n", "Line 2: Unmatched '}'"],
    ["a: BEGIN\nb: {\n  shape: x\n", "Line 4: Unclosed '{' block"],
    ['a: "BEGIN\n', "Line 2: Unclosed string"],
    ["a: BEGIN\nb: END\na -> b:   \n", "Line 3: Label cannot be empty"],
    ["a b: BEGIN\n", 'Line 1: Invalid node id "a b"'],
    ['a: "BEGIN" x\n', "Line 1: Unexpected trailing content"],
    ["a: BEGIN\nb: Work\nb: Other\n", 'Line 3: Conflicting definition for node "b"'],
  ];
  for (const [text, message] of cases) {
    throwsMessage(() => parseD2Flowchart(text), FlowParseError, message);
  }
});

Deno.test("fenced blocks: ``` and ~~~, longer fences, first mermaid/d2 block wins", () => {
  const md = [
    "---",
    "type: flow",
    "---",
    "```python",
    "print('x')",
    "```",
    "~~~~ D2 extra",
    "a: BEGIN",
    "b: END",
    "a -> b",
    "~~~~",
    "```mermaid",
    "A([BEGIN]) --> B([END])",
    "```",
  ].join("\n");
  assertEquals(fencedCodeBlocks(md).map((b) => b.lang), ["python", "d2", "mermaid"]);
  // A shorter fence does not close a longer one.
  assertEquals(fencedCodeBlocks("~~~~d2\na\n~~~\nb\n~~~~~\n"), [{ lang: "d2", code: "a\n~~~\nb" }]);
  assertEquals(parseFlowFromMarkdown(md).beginId, "a");
  assertThrows(() => parseFlowFromMarkdown("no diagram"), Error);
  throwsMessage(
    () => parseFlowFromMarkdown("```mermaid\nA --> B\n```"),
    Error,
    "Invalid flow diagram: Expected exactly one BEGIN node, found 0",
  );
  throwsMessage(
    () => parseFlowFromMarkdown("text"),
    Error,
    "Flow skills require a mermaid or d2 code block in SKILL.md.",
  );
});

Deno.test("parseChoice takes the last match, trimmed", () => {
  assertEquals(parseChoice("<choice>a</choice> and then <choice> b </choice>"), "b");
  assertEquals(parseChoice("no choice here"), null);
  assertEquals(parseChoice("<choice>x<y</choice>"), null);
  assertEquals(parseChoice("<choice></choice>"), "");
  assertEquals(parseChoice(null), null);
});

Deno.test("decision prompt golden", () => {
  const flow = parseMermaidFlowchart(
    "A([BEGIN]) --> B[Search]; B --> C{Enough?}; C -->|yes| D([END]); C -->|no| B",
  );
  assertEquals(
    decisionPrompt(flow.nodes.C, flow.outgoing.C),
    "Enough?\n\nAvailable branches:\n- yes\n- no\n\nReply with a choice using <choice>...</choice>.",
  );
});

/** A host that answers nested turns from a list of final texts and records the prompts. */
function scriptedHost(answers: string[], reasons: TurnResult["reason"][] = []) {
  const prompts: Array<string | ContentPart[]> = [];
  return {
    prompts,
    runNestedTurn(prompt: string | ContentPart[]): Promise<TurnResult> {
      const i = prompts.length;
      prompts.push(prompt);
      const text = answers[i] ?? "";
      return Promise.resolve({
        reason: reasons[i] ?? "no_tool_calls",
        finalMessage: { role: "assistant", content: [{ type: "text", text }] },
        steps: 1,
      } as TurnResult);
    },
  };
}

Deno.test("FlowRunner: tasks, decision by last choice, re-prompt on invalid choice", async () => {
  const flow = parseMermaidFlowchart(
    "A([BEGIN]) --> B[Search]; B --> C{Enough?}; C -->|yes| D([END]); C -->|no| B",
  );
  const host = scriptedHost([
    "searched",
    "hmm",
    "<choice>yes</choice> no wait <choice>no</choice>",
    "searched again",
    "<choice>yes</choice>",
  ]);
  const last = await new FlowRunner(flow).run(host);
  const base = decisionPrompt(flow.nodes.C, flow.outgoing.C);
  assertEquals(host.prompts, ["Search", base, base + INVALID_CHOICE_SUFFIX, "Search", base]);
  assertEquals(last?.finalMessage?.content, [{ type: "text", text: "<choice>yes</choice>" }]);
});

Deno.test("FlowRunner: args ignored, tool rejection stops, max moves raises", async () => {
  const flow = parseMermaidFlowchart("A([BEGIN]) --> B[One] --> C[Two] --> D([END])");
  const idle = scriptedHost([]);
  assertEquals(await new FlowRunner(flow).run(idle, "extra"), null);
  assertEquals(idle.prompts, []);

  const rejected = scriptedHost(["x", "y"], ["tool_rejected"]);
  await new FlowRunner(flow).run(rejected);
  assertEquals(rejected.prompts, ["One"]);

  const limited = scriptedHost(["x", "y"]);
  try {
    await new FlowRunner(flow, { maxMoves: 1 }).run(limited);
    throw new Error("expected MaxStepsReached");
  } catch (err) {
    assert(err instanceof MaxStepsReached);
    assertEquals(err.message, "Max number of steps reached: 1");
  }
  assertEquals(limited.prompts, ["One"]);
});

Deno.test("Ralph loop: R1 keeps the content parts, R2 decision prompt golden", async () => {
  const input: ContentPart[] = [
    { type: "text", text: "Fix the tests" },
    { type: "image_url", image_url: { url: "https://example.com/a.png", id: null } },
  ];
  const host = scriptedHost(["done", "<choice>CONTINUE</choice>", "<choice>STOP</choice>"]);
  await FlowRunner.ralphLoop(input, 5).run(host);
  const r2 = "Fix the tests. (You are running in an automated loop where the same prompt is fed " +
    "repeatedly. Only choose STOP when the task is fully complete. Including it will stop " +
    "further iterations. If you are not 100% sure, choose CONTINUE.)\n\nAvailable branches:\n" +
    "- CONTINUE\n- STOP\n\nReply with a choice using <choice>...</choice>.";
  assertEquals(host.prompts, [input, r2, r2]);

  const capped = scriptedHost(Array(10).fill("<choice>CONTINUE</choice>"));
  let error: unknown;
  await FlowRunner.ralphLoop("go", 2).run(capped).catch((e) => error = e);
  assert(error instanceof MaxStepsReached);
  assertEquals(capped.prompts.length, 3);
  assertEquals((error as MaxStepsReached).nSteps, 3);
});
