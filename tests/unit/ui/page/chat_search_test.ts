/**
 * In-chat search of the web page, the pure part: case-insensitive, non-overlapping occurrences;
 * segments of a turn (user message, text, thinking, tool cards with their subagent steps); the
 * matches in reading order; stepping with wrap-around; the "n of m" label.
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import {
  findMatches,
  matchLabel,
  occurrences,
  stepMatch,
  toolText,
  turnSegments,
} from "../../../../lib/ui/web/page/chat_search.ts";
import type { ToolBlock, Turn } from "../../../../lib/ui/web/page/transcript.ts";

function turn(index: number, userText: string, blocks: Turn["blocks"] = []): Turn {
  return { index, userText, userImages: [], userFiles: [], blocks, ended: true };
}

const shell: ToolBlock = {
  kind: "tool",
  id: "tc-1",
  name: "Shell",
  args: '{"command":"grep Needle src"}',
  result: {
    isError: false,
    output: "src/a.ts: needle\nsrc/b.ts: NEEDLE",
    message: "",
    display: [{ type: "brief", text: "two needles" }],
  },
  subagent: null,
};

Deno.test("chat search: occurrences are case-insensitive and do not overlap", () => {
  assertEquals(occurrences("Aaa aAa", "aa"), [0, 4]);
  assertEquals(occurrences("Needle, needle, NEEDLE", "needle"), [0, 8, 16]);
  assertEquals(occurrences("nothing here", "needle"), []);
  assertEquals(occurrences("anything", ""), []);
});

Deno.test("chat search: a turn's segments are the user message and its text, thinking and tool blocks", () => {
  const t = turn(3, "Find the needle", [
    { kind: "think", text: "where is the needle?" },
    { kind: "notice", text: "needle notice", tone: "info" },
    { kind: "text", text: "**Found** it" },
    shell,
    { kind: "compaction", done: true },
  ]);
  const segs = turnSegments(t, (md) => md.replaceAll("**", ""));
  assertEquals(segs.map((s) => [s.turn, s.seg, s.kind]), [
    [3, 0, "user"],
    [3, 1, "think"],
    [3, 3, "text"],
    [3, 4, "tool"],
  ]);
  // Markdown is searched as rendered: the `plain` function's text.
  assertEquals(segs[2].text, "Found it");
  // A turn without a user message (a continuation) has no segment 0.
  assertEquals(turnSegments(turn(0, "", [{ kind: "text", text: "x" }])).map((s) => s.seg), [1]);
});

Deno.test("chat search: a tool card's text holds its arguments, output, display and subagent steps", () => {
  const text = toolText(shell);
  assertEquals(occurrences(text, "needle").length, 4);
  const agent: ToolBlock = {
    ...shell,
    name: "Agent",
    args: "{}",
    result: { isError: true, output: "", message: "subagent failed", display: [] },
    subagent: {
      agentId: "a1",
      type: "coder",
      blocks: [{ kind: "text", text: "inner _needle_" }, { ...shell, subagent: null }],
    },
  };
  const inner = toolText(agent, (md) => md.replaceAll("_", ""));
  assertEquals(occurrences(inner, "subagent failed").length, 1);
  assertEquals(occurrences(inner, "inner needle").length, 1);
  assertEquals(occurrences(inner, "needle").length, 5);
});

Deno.test("chat search: matches in reading order, each knowing its segment's count", () => {
  const turns = [
    turn(0, "alpha beta", [{ kind: "text", text: "Beta and BETA" }]),
    turn(1, "gamma", [{ kind: "think", text: "no" }]),
    turn(2, "beta again", [shell]),
  ];
  const found = findMatches(turns, "beta");
  assertEquals(
    found.map((m) => [m.turn, m.seg, m.occurrence, m.inSegment]),
    [[0, 0, 0, 1], [0, 1, 0, 2], [0, 1, 1, 2], [2, 0, 0, 1]],
  );
  assertEquals(findMatches(turns, ""), []);
  assertEquals(findMatches(turns, "zeta"), []);
});

Deno.test("chat search: stepping wraps around both ways; the label counts from 1", () => {
  assertEquals(stepMatch(0, 3, 1), 1);
  assertEquals(stepMatch(2, 3, 1), 0);
  assertEquals(stepMatch(0, 3, -1), 2);
  assertEquals(stepMatch(-1, 3, 1), 0);
  assertEquals(stepMatch(-1, 3, -1), 2);
  assertEquals(stepMatch(0, 0, 1), -1);
  assertEquals(matchLabel(1, 3, "x"), "2 of 3");
  assertEquals(matchLabel(-1, 0, "x"), "No matches");
  assertEquals(matchLabel(-1, 0, ""), "");
});
