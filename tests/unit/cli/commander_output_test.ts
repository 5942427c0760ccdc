import { assertEquals } from "../../helpers/assert.ts";
import { stripVTControlCharacters } from "node:util";
import { Command } from "../../../lib/cli/commander.ts";
import { commanderHelp, commanderOutput, forcedColor } from "../../../lib/cli/commander_output.ts";

const env = (vars: Record<string, string>) => (k: string) => vars[k];

Deno.test("commander output: colour forced the way commander reads the environment", () => {
  assertEquals(forcedColor(env({})), undefined);
  assertEquals(forcedColor(env({ NO_COLOR: "1" })), false);
  assertEquals(forcedColor(env({ NO_COLOR: "1", FORCE_COLOR: "1" })), false);
  assertEquals(forcedColor(env({ FORCE_COLOR: "0" })), false);
  assertEquals(forcedColor(env({ FORCE_COLOR: "false" })), false);
  assertEquals(forcedColor(env({ FORCE_COLOR: "1" })), true);
  assertEquals(forcedColor(env({ CLICOLOR_FORCE: "" })), true);
});

/** A stream that records what is written, in pieces of at most `chunk` bytes. */
function fakeStream(terminal: boolean, chunk = 3) {
  const bytes: number[] = [];
  return {
    bytes,
    isTerminal: () => terminal,
    writeSync(p: Uint8Array) {
      const n = Math.min(chunk, p.length);
      bytes.push(...p.subarray(0, n));
      return n;
    },
  };
}

Deno.test("commander output: off a terminal, 80 columns and colour only when forced", () => {
  const stdout = fakeStream(false);
  const stderr = fakeStream(false);
  const plain = commanderOutput(env({}), { stdout, stderr });
  assertEquals(plain.getOutHelpWidth(), 80);
  assertEquals(plain.getErrHelpWidth(), 80);
  assertEquals(plain.getOutHasColors(), false);
  assertEquals(
    commanderOutput(env({ FORCE_COLOR: "1" }), { stdout, stderr }).getErrHasColors(),
    true,
  );
  // on a terminal, colour unless TERM=dumb or NO_COLOR
  const tty = { stdout: fakeStream(true), stderr: fakeStream(true) };
  assertEquals(commanderOutput(env({ TERM: "xterm" }), tty).getOutHasColors(), true);
  assertEquals(commanderOutput(env({ TERM: "dumb" }), tty).getOutHasColors(), false);
  assertEquals(
    commanderOutput(env({ TERM: "xterm", NO_COLOR: "1" }), tty).getOutHasColors(),
    false,
  );
  // partial writes are continued until everything is out
  plain.writeOut("Usage: kimi ✓\n");
  assertEquals(new TextDecoder().decode(new Uint8Array(stdout.bytes)), "Usage: kimi ✓\n");
  assertEquals(stderr.bytes.length, 0);
});

Deno.test("commander output: colour stripping and help widths match commander's node:util ones", () => {
  const samples = [
    "plain",
    "\x1b[1mBold\x1b[22m and \x1b[38;5;245mgrey\x1b[39m",
    "\x1b]8;;https://example.com\x07link\x1b]8;;\x07",
    "\x1b[2K\x1b[1Gcleared",
    "中文 ✓",
  ];
  const out = commanderOutput(env({}), { stdout: fakeStream(false), stderr: fakeStream(false) });
  const help = commanderHelp();
  for (const s of samples) {
    assertEquals(out.stripColor(s), stripVTControlCharacters(s), JSON.stringify(s));
    assertEquals(help.displayWidth(s), stripVTControlCharacters(s).length, JSON.stringify(s));
  }
  // help laid out with kimi's measure is commander's own layout, coloured terms included
  const program = () =>
    new Command("x").description("d").option(
      "--\x1b[1mbold\x1b[22m",
      "an option with a long description that wraps",
    );
  const ours = program().configureHelp(commanderHelp()).helpInformation();
  assertEquals(ours, program().helpInformation());
});
