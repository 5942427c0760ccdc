/**
 * The shape of a shell-level slash command.
 *
 * @module
 */
import type { ShellContext } from "../shell_context.ts";

/** What a command asks the shell to do next. */
export type CommandOutcome = "exit" | void;

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
