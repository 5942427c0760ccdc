/**
 * The shell's turn renderer on a fake terminal: streamed markdown is displayed the same however
 * the stream is chunked (issue 19), including blocks a blank line does not end (a list item's
 * next paragraph, the next item of a loose list).
 */
import { assertEquals } from "../../helpers/assert.ts";
import { loadMarkdown } from "../../../lib/ui/shell/markdown.ts";
import { Terminal, type TerminalIO } from "../../../lib/ui/shell/terminal.ts";
import { TurnRenderer } from "../../../lib/ui/shell/turn_renderer.ts";
import type { WireMessage } from "../../../lib/wire/messages.ts";

/** A terminal whose output is collected; `printed()` is the text above the live area. */
function fakeTerminal(columns = 80): { term: Terminal; printed: () => string } {
  let out = "";
  const io: TerminalIO = {
    write: (data) => (out += new TextDecoder().decode(data)),
    size: () => ({ columns, rows: 40 }),
    setRaw: () => {},
    input: new ReadableStream(),
  };
  const term = new Terminal(io);
  const origPrint = term.print.bind(term);
  let printed = "";
  term.print = (text: string) => {
    printed += text + "\n";
    origPrint(text);
  };
  // deno-lint-ignore no-control-regex
  return { term, printed: () => printed.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "") };
}

async function render(text: string, chunk: number): Promise<string> {
  const { term, printed } = fakeTerminal();
  const r = new TurnRenderer({
    term,
    markdown: loadMarkdown,
    showThinking: true,
    statusLine: () => "status",
  });
  const size = chunk > 0 ? chunk : text.length;
  for (let i = 0; i < text.length; i += size) {
    const part = { type: "text", text: text.slice(i, i + size) } as const;
    await r.feed({ type: "ContentPart", payload: part } as WireMessage);
  }
  await r.finish();
  return printed();
}

const CASES: Record<string, string> = {
  "paragraphs and headings": "# Title\n\nOne.\n\nTwo.\n## Sub\nThree.\n\n\n\nFour.",
  "list item with a second paragraph":
    "- first item\n\n  its second paragraph\n\n- next item\n\nAfter.",
  "ordered loose list": "1. one\n\n2. two\n\n3. three\n\nDone.",
  "code fence with blank lines": "Intro:\n\n```py\na = 1\n\n\nb = 2\n```\nAfter the code.",
  "table then text": "| a | b |\n|---|---|\n| 1 | 2 |\n\nText **after**.",
};

for (const [name, text] of Object.entries(CASES)) {
  Deno.test(`turn renderer: ${name} renders the same in 1-, 3- and 4-character chunks`, async () => {
    const whole = await render(text, 0);
    for (const n of [1, 3, 4]) assertEquals(await render(text, n), whole, `chunks of ${n}`);
  });
}

Deno.test("turn renderer: inline markdown in list items is rendered", async () => {
  const out = await render(
    "- use `deno fmt` and *then* **lint**\n- see [docs](http://d.example)",
    4,
  );
  assertEquals(out.replace(/^\n+|\s+$/g, "").split("\n"), [
    "  * use deno fmt and then lint",
    "  * see docs (http://d.example)",
  ]);
});
