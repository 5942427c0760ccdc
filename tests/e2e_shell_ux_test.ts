/**
 * End-to-end tests of the shell as a new user meets it (issue 19): streamed markdown, resizing,
 * resuming, and messages. `main.ts` runs in a real PTY under tmux against the mock
 * OpenAI-compatible server; every wait polls the screen (no fixed sleeps).
 */
import { assert, assertEquals, assertStringIncludes } from "./helpers/assert.ts";
import { type KimiSandbox, kimiSandbox } from "./helpers/kimi_process.ts";
import { startMockOpenAI } from "./helpers/mock_openai.ts";
import { TmuxKimi } from "./helpers/tmux.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** Whether the prompt is idle: an empty `✨` input line above the status line. */
function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

async function withSandbox(fn: (sb: KimiSandbox) => Promise<void>): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.cleanup();
  }
}

/** The transcript rows between the echo of `input` and the next prompt echo or live area. */
function turnOutput(screen: string, input: string): string[] {
  const lines = screen.split("\n");
  const start = lines.findIndex((l) => l === `✨ ${input}`);
  assert(start >= 0, `no echo of ${input} in:\n${screen}`);
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => l.startsWith("✨"));
  return (end < 0 ? rest : rest.slice(0, end)).map((l) => l.trimEnd());
}

const MARKDOWN = [
  "# Release notes",
  "",
  "The first paragraph has `inline code` and *emphasis*.",
  "It continues on a second line.",
  "",
  "- a list item with `code`, **bold** and [a link](http://example.com)",
  "- a second *item*",
  "",
  "```ts",
  "const answer = 42;",
  "```",
  "",
  "| name | value |",
  "|------|-------|",
  "| x    | 1     |",
  "",
  "## Next steps",
  "",
  "Last paragraph.",
].join("\n");

const RENDERED = [
  "# Release notes",
  "",
  "The first paragraph has inline code and emphasis. It continues on a second line.",
  "",
  "  * a list item with code, bold and a link (http://example.com)",
  "  * a second item",
  "",
  "  const answer = 42;",
  "",
  "┌──────┬───────┐",
  "│ name │ value │",
  "├──────┼───────┤",
  "│ x    │ 1     │",
  "└──────┴───────┘",
  "",
  "## Next steps",
  "",
  "Last paragraph.",
];

Deno.test(
  "shell: markdown streamed in 4-character chunks renders like the whole text (blank lines between blocks, inline markup in list items)",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        mock.enqueue({ text: MARKDOWN, chunkChars: 4 }, { text: MARKDOWN });
        const config = await sb.openaiConfig(mock.url);
        const t = await TmuxKimi.start(sb, ["--config-file", config], { width: 100, height: 60 });
        try {
          await t.waitFor(promptReady);
          await t.type("chunked");
          await t.keys("Enter");
          await t.waitFor((s) => s.includes("Last paragraph.") && promptReady(s));
          await t.type("whole");
          await t.keys("Enter");
          const screen = await t.waitFor((s) =>
            s.split("Last paragraph.").length === 3 && promptReady(s)
          );
          assertEquals(turnOutput(screen, "chunked"), RENDERED);
          assertEquals(turnOutput(screen, "whole"), RENDERED);
        } finally {
          await t.close();
        }
      } finally {
        await mock.close();
      }
    }),
);
