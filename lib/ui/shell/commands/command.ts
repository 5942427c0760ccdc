/**
 * The shape of a shell-level slash command.
 *
 * @module
 */
import type { ShellContext } from "../shell_context.ts";

/** A front end the shell hands its session to when it ends (`/web`, `/vis`). */
export type ShellSwitch = "web" | "vis";

/** What a command asks the shell to do next: exit, or exit and hand over to a front end. */
export type CommandOutcome = "exit" | { switchTo: ShellSwitch } | void;

/** A shell-level slash command. */
export interface ShellCommand {
  /** Name without the slash. */
  name: string;
  /** Other names. */
  aliases: string[];
  /** One-line description. */
  description: string;
  /** Run it. */
  run(ctx: ShellContext, args: string): Promise<CommandOutcome>;
}
