/**
 * Pure logic of the page's newer features: which turns an `/undo` took back and which turn the
 * Undo action targets; the elapsed time and status of a background task; the cross-session
 * search URL and highlighting.
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import {
  isSlashCommand,
  undoMarks,
  type UndoTurnView,
} from "../../../../lib/ui/web/page/undo_marks.ts";
import {
  type BackgroundTask,
  durationLabel,
  taskElapsedSeconds,
  taskStatusLabel,
} from "../../../../lib/ui/web/page/task_list.ts";
import { highlightParts, searchPath } from "../../../../lib/ui/web/page/search_hits.ts";

function turns(...specs: [string, string?, boolean?][]): UndoTurnView[] {
  return specs.map(([userText, answer = "ok", ended = true], index) => ({
    index,
    userText,
    answer,
    ended,
  }));
}

Deno.test("undo marks: /undo takes back the latest real turn; the target moves back", () => {
  assertEquals(undoMarks([]), { undone: new Set(), target: null });
  assertEquals(undoMarks(turns(["a"], ["b"])), { undone: new Set(), target: 1 });
  const one = undoMarks(
    turns(["a"], ["b"], ["/undo", "Undid the last turn.\nRestored 1 file: x."]),
  );
  assertEquals(one, { undone: new Set([1]), target: 0 });
  // two undos in a row take back two turns; a third finds none left
  const two = undoMarks(turns(
    ["a"],
    ["b"],
    ["/undo", "Undid the last turn."],
    ["/undo", "Undid the last turn."],
  ));
  assertEquals(two, { undone: new Set([0, 1]), target: null });
  // /undo 2 and other slash commands (never turns of the conversation)
  const n = undoMarks(
    turns(["a"], ["/export"], ["b"], ["c"], ["/undo 2", "Undid the last 2 turns."]),
  );
  assertEquals(n, { undone: new Set([2, 3]), target: 0 });
  // a refused or unfinished /undo marks nothing
  assertEquals(
    undoMarks(turns(["a"], ["/undo 5", "There is only 1 turn to undo; nothing was undone."])),
    { undone: new Set(), target: 0 },
  );
  assertEquals(
    undoMarks(turns(["a"], ["/undo", "Undid the last turn.", false])),
    { undone: new Set(), target: 0 },
  );
  // a slash command in which the agent loop ran (a skill) is a turn of the conversation
  assertEquals(
    undoMarks([
      { index: 0, userText: "a", answer: "", ended: true, steps: 1 },
      { index: 1, userText: "/skill:review", answer: "", ended: true, steps: 2 },
      { index: 2, userText: "/undo", answer: "Undid the last turn.", ended: true, steps: 0 },
    ]),
    { undone: new Set([1]), target: 0 },
  );
  // a turn after an undo is the next target
  assertEquals(
    undoMarks(turns(["a"], ["b"], ["/undo", "Undid the last turn."], ["c"])),
    { undone: new Set([1]), target: 3 },
  );
});

Deno.test("undo marks: what counts as a slash command", () => {
  assertEquals(isSlashCommand("/undo"), true);
  assertEquals(isSlashCommand("  /add-dir ../x"), true);
  assertEquals(isSlashCommand("/skill:review now"), true);
  assertEquals(isSlashCommand("/usr/bin is a path"), false);
  assertEquals(isSlashCommand("fix /tmp/x"), false);
  assertEquals(isSlashCommand("/"), false);
  assertEquals(isSlashCommand("// comment"), false);
});

function task(over: Partial<BackgroundTask>): BackgroundTask {
  return {
    task_id: "bash-12345678",
    kind: "bash",
    status: "running",
    description: "d",
    command: "sleep 9",
    subagent_type: null,
    created_at: 100,
    started_at: 101,
    finished_at: null,
    exit_code: null,
    timed_out: false,
    failure_reason: null,
    output_tail: "",
    output_bytes: 0,
    running: true,
    ...over,
  };
}

Deno.test("task list: elapsed time, its label and the status line", () => {
  assertEquals(taskElapsedSeconds(task({}), 143.9), 42);
  assertEquals(taskElapsedSeconds(task({ started_at: null }), 150), 50);
  assertEquals(
    taskElapsedSeconds(task({ running: false, status: "completed", finished_at: 111 }), 999),
    10,
  );
  // a task that never started and is over: no time
  assertEquals(
    taskElapsedSeconds(task({ running: false, status: "lost", started_at: null }), 999),
    0,
  );
  assertEquals(taskElapsedSeconds(task({}), 50), 0);
  assertEquals(durationLabel(0), "0s");
  assertEquals(durationLabel(59.9), "59s");
  assertEquals(durationLabel(184), "3m 04s");
  assertEquals(durationLabel(7500), "2h 05m");
  assertEquals(taskStatusLabel(task({})), "running");
  assertEquals(
    taskStatusLabel(task({ running: false, status: "failed", exit_code: 2 })),
    "failed (exit 2)",
  );
  assertEquals(
    taskStatusLabel(task({ running: false, status: "failed", timed_out: true })),
    "timed out",
  );
});

Deno.test("search hits: the page URL and the highlighted parts", () => {
  assertEquals(searchPath("  a&b=c ", 20), "/api/search?q=a%26b%3Dc&limit=20&offset=20");
  assertEquals(highlightParts("Fix the Zebra and the zebra", "ZEBRA"), [
    { text: "Fix the ", hit: false },
    { text: "Zebra", hit: true },
    { text: " and the ", hit: false },
    { text: "zebra", hit: true },
  ]);
  assertEquals(highlightParts("abc", " "), [{ text: "abc", hit: false }]);
  assertEquals(highlightParts("aaa", "aa"), [{ text: "aa", hit: true }, { text: "a", hit: false }]);
});
