import { assertEquals } from "../../helpers/assert.ts";
import { attentionSequence } from "../../../lib/ui/shell/attention.ts";
import { goalAttention, questionAttention } from "../../../lib/hooks/notification_hooks.ts";
import { KeyDecoder } from "../../../lib/ui/shell/keys.ts";

const a = {
  type: "approval.requested",
  title: "Approval needed: Shell",
  body: "Run `ls`\nmore",
  severity: "warning",
};
const env = (vars: Record<string, string>) => (n: string) => vars[n];
const on = { terminalBell: true, desktop: true, focused: null, env: env({}) };

Deno.test("attention: OSC 9 and the bell; OSC 777 for rxvt and foot; wrapped for tmux; nothing when focused or off", () => {
  assertEquals(attentionSequence(a, on), "\x1b]9;Approval needed: Shell: Run `ls`\x1b\\\x07");
  assertEquals(
    attentionSequence(a, { ...on, env: env({ TERM: "foot" }) }),
    "\x1b]777;notify;Approval needed: Shell;Run `ls`\x1b\\\x07",
  );
  assertEquals(
    attentionSequence(a, { ...on, terminalBell: false, env: env({ TMUX: "/tmp/t,1,0" }) }),
    "\x1bPtmux;\x1b\x1b]9;Approval needed: Shell: Run `ls`\x1b\x1b\\\x1b\\",
  );
  assertEquals(attentionSequence(a, { ...on, focused: true }), "");
  assertEquals(attentionSequence(a, { ...on, focused: false, desktop: false }), "\x07");
  assertEquals(attentionSequence(a, { ...on, terminalBell: false, desktop: false }), "");
  // control characters from a model-written title cannot end the OSC string early
  const hostile = { ...a, title: "x\x1b\\\x07\x1b]0;pwned\x07", body: "" };
  assertEquals(
    attentionSequence(hostile, { ...on, terminalBell: false }),
    "\x1b]9;x\\]0;pwned\x1b\\",
  );
});

Deno.test("attention: question and goal notices", () => {
  assertEquals(
    questionAttention([{
      question: "Which?",
      header: "",
      options: [],
      multi_select: false,
      body: "",
      other_label: "",
      other_description: "",
    }]).type,
    "question.asked",
  );
  assertEquals(goalAttention({ goal: null, queue: [], outcome: null }), null);
  assertEquals(
    goalAttention({ goal: null, queue: [], outcome: "achieved" })?.type,
    "goal.achieved",
  );
});

Deno.test("keys: focus reports decode as focus-in / focus-out", () => {
  assertEquals(new KeyDecoder().feed("\x1b[Ia\x1b[O").map((k) => k.name), [
    "focus-in",
    "char",
    "focus-out",
  ]);
});
