/**
 * commander (typed by `@commander-js/extra-typings`) for the CLI modules, which load it when
 * the command line is parsed (`kimi --version` answers before, in `main.ts`).
 *
 * @module
 */
import * as commander from "@commander-js/extra-typings";

/** commander's `Command`. */
export const Command: typeof commander.Command = commander.Command;
/** commander's `Option`. */
export const Option: typeof commander.Option = commander.Option;
/** commander's `CommanderError` (what `exitOverride()` makes the parser throw). */
export const CommanderError: typeof commander.CommanderError = commander.CommanderError;
/** commander's `InvalidArgumentError` (for option value parsers). */
export const InvalidArgumentError: typeof commander.InvalidArgumentError =
  commander.InvalidArgumentError;
