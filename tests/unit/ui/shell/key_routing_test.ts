/**
 * Keys reach the shell's handlers one at a time and in the order typed, whoever takes them:
 * the type-ahead editor of a turn, the prompt after it, a modal, or nobody yet. A turn that ends
 * while typed keys are still being handled must not let later keys overtake earlier ones.
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import type { Key } from "../../../../lib/ui/shell/keys.ts";
import { HistoryStore } from "../../../../lib/ui/shell/history_store.ts";
import { LineEditor, type ReadResult } from "../../../../lib/ui/shell/line_editor.ts";
import { Terminal, type TerminalIO } from "../../../../lib/ui/shell/terminal.ts";

const encoder = new TextEncoder();

/** A terminal over an in-memory IO, with a way to type bytes into it. */
function fakeTerminal(): { term: Terminal; type: (text: string) => void; end: () => void } {
  let input!: ReadableStreamDefaultController<Uint8Array>;
  const io: TerminalIO = {
    write() {},
    size: () => ({ columns: 80, rows: 24 }),
    setRaw() {},
    input: new ReadableStream<Uint8Array>({ start: (c) => void (input = c) }),
  };
  const term = new Terminal(io);
  term.start();
  return {
    term,
    type: (text) => input.enqueue(encoder.encode(text)),
    end: () => {
      term.stop();
      input.close();
    },
  };
}

/** One turn of the event loop: every microtask queued before it has run. */
function tick(): Promise<void> {
  return new Promise((r) => setTimeout(r, 0));
}

async function microtasks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

/**
 * Type `/afk` and Enter while a turn runs, end the turn `endAfter` microtasks after the keys
 * were typed and open the prompt `promptAfter` microtasks later (the shell does both within a
 * handful of microtasks; under load, the read of the keys and the turn's end complete in the
 * same turn of the event loop, so their continuations interleave). Returns what was submitted
 * and what is left in the input.
 */
async function typeWhileTurnEnds(
  endAfter: number,
  promptAfter: number,
): Promise<{ submitted: string[]; left: string }> {
  const { term, type, end } = fakeTerminal();
  const editor = new LineEditor({
    term,
    history: new HistoryStore("/nonexistent/history.jsonl"),
    completion: { workDir: "/nonexistent", commands: () => ["afk", "help"] },
    footer: () => ["status"],
  });
  const submitted: string[] = [];
  let prompted = false;
  editor.attachTurn({
    onSubmit: (text) => submitted.push(`queued: ${text}`),
    onSteer: (text) => submitted.push(`steered: ${text}`),
    onInterrupt: () => submitted.push("interrupt"),
    render: () => {},
  });
  try {
    // the terminal now waits in a read
    for (let i = 0; i < 3; i++) await tick();
    type("/afk\r");
    void (async () => {
      await microtasks(endAfter);
      editor.detachTurn();
      await microtasks(promptAfter);
      prompted = true;
      // as the shell's loop: an empty line reads again
      const prompt = (): void =>
        void editor.read().then((r: ReadResult) => {
          if (r.kind === "exit") submitted.push("exit");
          else if (!r.text.trim()) prompt();
          else submitted.push(`entered: ${r.text}`);
        });
      prompt();
    })();
    while (!prompted) await tick();
    // what is left is handling keys (no I/O): a turn of the event loop finishes it
    for (let i = 0; i < 3; i++) await tick();
    return { submitted, left: editor.text };
  } finally {
    end();
    await term.closed();
  }
}

Deno.test("shell keys: a command typed while the turn ends runs once, whole, wherever the turn's end falls", async () => {
  const outcomes = new Set<string>();
  for (let endAfter = 0; endAfter <= 30; endAfter++) {
    for (const promptAfter of [0, 1, 2, 3, 4, 6, 9]) {
      const { submitted, left } = await typeWhileTurnEnds(endAfter, promptAfter);
      const where = `turn ended after ${endAfter} microtasks, prompt after ${promptAfter} more`;
      assertEquals(left, "", `text left in the prompt (${where}): ${submitted}`);
      assertEquals(submitted.length, 1, `submissions (${where}): ${submitted}`);
      assertEquals(submitted[0].endsWith(": /afk"), true, `submission (${where}): ${submitted}`);
      outcomes.add(submitted[0]);
    }
  }
  // both sides of the race were reached: queued during the turn, and entered at the prompt
  assertEquals([...outcomes].sort(), ["entered: /afk", "queued: /afk"]);
});

Deno.test("shell keys: a handler's pending promise holds the next key, which goes to whoever handles keys then", async () => {
  const { term, type, end } = fakeTerminal();
  const log: string[] = [];
  const first = Promise.withResolvers<void>();
  const name = (k: Key) => k.text ?? k.name;
  try {
    term.setHandler((k) => {
      log.push(`slow ${name(k)}`);
      if (k.text === "a") return first.promise;
    });
    // one read each (typed together, they would be one key of three characters)
    for (const c of "abc") type(c);
    while (log.length === 0) await tick();
    for (let i = 0; i < 3; i++) await tick();
    // "b" and "c" wait for "a"; meanwhile the handler changes (a turn ended, a modal opened)
    assertEquals(log, ["slow a"]);
    term.setHandler(null);
    term.setHandler((k) => void log.push(`next ${name(k)}`));
    assertEquals(log, ["slow a"]);
    first.resolve();
    while (log.length < 3) await tick();
    assertEquals(log, ["slow a", "next b", "next c"]);
    // with no handler, keys wait; an injected key goes before them; order is kept
    term.setHandler(null);
    for (const c of "de") type(c);
    for (let i = 0; i < 3; i++) await tick();
    term.inject({ name: "escape" });
    term.setHandler((k) => void log.push(`last ${name(k)}`));
    while (log.length < 6) await tick();
    assertEquals(log.slice(3), ["last escape", "last d", "last e"]);
  } finally {
    end();
    await term.closed();
  }
});

Deno.test("shell keys: a handler that throws loses its key, not the keys after it nor the input", async () => {
  const { term, type, end } = fakeTerminal();
  const log: string[] = [];
  try {
    term.setHandler((k) => {
      if (k.text === "x") throw new Error("handler bug");
      if (k.text === "y") return Promise.reject(new Error("async handler bug"));
      log.push(k.text ?? k.name);
    });
    for (const c of "axbyc") type(c);
    while (log.length < 3) await tick();
    assertEquals(log, ["a", "b", "c"]);
  } finally {
    end();
    await term.closed();
  }
});
