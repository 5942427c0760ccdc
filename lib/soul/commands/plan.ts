/**
 * `/plan [on|off|view|clear]`: switch plan mode, show or delete the current plan (reference
 * §6.11). Without an argument it toggles plan mode.
 *
 * @module
 */
import { statusUpdate } from "../../wire/messages.ts";
import type { CommandHost, SoulCommand } from "../slash_commands.ts";

function emitPlanStatus(soul: CommandHost): void {
  soul.emit(statusUpdate({ plan_mode: soul.planMode }));
}

/** Text shown when plan mode goes off. */
export const PLAN_OFF_TEXT = "Plan mode OFF. All tools are now available.";

/** The `/plan` command. */
export const planCommand: SoulCommand = {
  name: "plan",
  description: "Toggle plan mode. Usage: /plan [on|off|view|clear]",
  aliases: [],
  async run({ soul, args, say }) {
    const plan = soul.plan;
    const sub = args.trim().toLowerCase();
    switch (sub) {
      case "on":
        if (!soul.planMode) await soul.setPlanMode(true);
        say(`Plan mode ON. Plan file: ${plan?.planFile ?? null}`);
        emitPlanStatus(soul);
        return;
      case "off":
        if (soul.planMode) await soul.setPlanMode(false);
        say(PLAN_OFF_TEXT);
        emitPlanStatus(soul);
        return;
      case "view": {
        const content = plan ? await plan.readPlan() : null;
        say(content ? content : "No plan file found for this session.");
        return;
      }
      case "clear":
        await plan?.clearPlan();
        say("Plan cleared.");
        return;
      default: {
        const on = await soul.setPlanMode(!soul.planMode);
        say(
          on
            ? `Plan mode ON. Kimi will explore and write its plan to ${
              plan?.planFile ?? "the plan file"
            } without changing your files, then ask you to approve it.\n` +
              "Type /plan off to leave plan mode yourself."
            : PLAN_OFF_TEXT,
        );
        emitPlanStatus(soul);
      }
    }
  },
};
