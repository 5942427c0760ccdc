/**
 * A program that draws through the shell's {@link Terminal} in a real terminal, for
 * `live_area_resize_test.ts`. The width it lays its rows out for is the one the test tells it
 * (not the terminal's), so a frame laid out for the old width can reach the terminal after the
 * terminal has narrowed, as when the stream draws before the program has seen the SIGWINCH.
 *
 * Arguments: the width it starts believing in and how many committed lines it prints before
 * the live area. Commands on stdin, each ended by `.`: `w<columns>` sets the width it believes in, `f` draws
 * the next frame of the live area, `q` removes the live area, prints `after` and exits.
 *
 * @module
 */
import { wrapRows } from "../../../../lib/ui/shell/layout.ts";
import { Terminal } from "../../../../lib/ui/shell/terminal.ts";

let columns = Number(Deno.args[0] ?? "110");
const committed = Number(Deno.args[1] ?? "5");
let frame = 0;
const term = new Terminal({
  write(data) {
    let off = 0;
    while (off < data.length) off += Deno.stdout.writeSync(data.subarray(off));
  },
  size: () => ({ columns, rows: 40 }),
  setRaw() {},
  input: new ReadableStream(),
});

/** A streamed paragraph's pending rows (full width) and a status row; no visible cursor. */
function draw(): void {
  frame++;
  const text = `frame-${frame} ` + "pending lorem ipsum dolor sit amet ".repeat(12).trim();
  term.render([...wrapRows(text, columns), `status ${frame}`], null);
}

Deno.stdin.setRaw(true);
for (let i = 1; i <= committed; i++) term.print(`committed ${i}`);
draw();
const decoder = new TextDecoder();
let pending = "";
const buf = new Uint8Array(64);
while (true) {
  const n = await Deno.stdin.read(buf);
  if (n === null) break;
  pending += decoder.decode(buf.subarray(0, n));
  let end: number;
  while ((end = pending.indexOf(".")) >= 0) {
    const cmd = pending.slice(0, end);
    pending = pending.slice(end + 1);
    if (cmd.startsWith("w")) columns = Number(cmd.slice(1));
    else if (cmd === "f") draw();
    else if (cmd === "q") {
      term.clearLive();
      term.print("after");
      Deno.stdin.setRaw(false);
      Deno.exit(0);
    }
  }
}
