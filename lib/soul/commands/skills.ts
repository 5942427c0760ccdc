/**
 * `/skill:<name> [request]` and `/flow:<name>`: slash commands built from the discovered
 * skills (reference §6.11).
 *
 * - `/skill:<name>` runs a turn whose user message is the whole skill file (trimmed,
 *   frontmatter included), followed by `\n\nUser request:\n<request>` when one is given.
 * - `/flow:<name>` (flow skills only) runs the skill's flow; arguments are not supported.
 *
 * @module
 */
import { log } from "../../log.ts";
import { readSkillText, type Skill } from "../../skills/skill.ts";
import type { ControlPath } from "../../tooling/control_paths.ts";
import { DEFAULT_MAX_FLOW_MOVES, FlowRunner } from "../flow_runner.ts";
import type { SoulCommand } from "../slash_commands.ts";

/** Prefix of skill commands. */
export const SKILL_COMMAND_PREFIX = "skill:";
/** Prefix of flow commands. */
export const FLOW_COMMAND_PREFIX = "flow:";

/** The user message of `/skill:<name>` for a skill text and the text after the command. */
export function skillPrompt(skillText: string, request: string): string {
  const extra = request.trim();
  return extra ? `${skillText}\n\nUser request:\n${extra}` : skillText;
}

function skillCommand(skill: Skill, controls: readonly ControlPath[]): SoulCommand {
  const name = `${SKILL_COMMAND_PREFIX}${skill.name}`;
  return {
    name,
    description: skill.description,
    aliases: [],
    async run({ soul, args, say }) {
      const text = await readSkillText(skill, controls);
      if (text === null) {
        say(`Failed to load skill "/${name}".`);
        return;
      }
      await soul.turn({ role: "user", content: [{ type: "text", text: skillPrompt(text, args) }] });
    },
  };
}

function flowCommand(skill: Skill): SoulCommand {
  const flow = skill.flow!;
  return {
    name: `${FLOW_COMMAND_PREFIX}${skill.name}`,
    description: skill.description,
    aliases: [],
    async run({ soul, args }) {
      if (args.trim()) {
        log("WARNING", "flow", `/flow:${skill.name} takes no arguments; ignored: ${args}`);
        return;
      }
      await new FlowRunner(flow, { maxMoves: DEFAULT_MAX_FLOW_MOVES, name: skill.name }).run(soul);
    },
  };
}

/**
 * The commands of `skills`: every `skill:<name>` (in the given order), then `flow:<name>` for
 * flow skills. A command whose name is in `taken` (or repeats an earlier one) is skipped with
 * a logged warning. A skill file leading to one of the session's secret `controls` is not read.
 */
export function skillCommands(
  skills: readonly Skill[],
  taken: Iterable<string> = [],
  controls: readonly ControlPath[] = [],
): SoulCommand[] {
  const seen = new Set(taken);
  const out: SoulCommand[] = [];
  const push = (cmd: SoulCommand) => {
    if (seen.has(cmd.name)) {
      log("WARNING", "skills", `Skipping slash command /${cmd.name}: name already registered`);
      return;
    }
    seen.add(cmd.name);
    out.push(cmd);
  };
  for (const s of skills) push(skillCommand(s, controls));
  for (const s of skills) if (s.type === "flow" && s.flow) push(flowCommand(s));
  return out;
}
