/**
 * commander (typed by `@commander-js/extra-typings`) for the CLI modules. A run from the source
 * takes it from its pre-bundle (`lib/prebundle/`), where commander's `node:child_process`,
 * `node:fs` and `node:process` load on first use (help output, executable subcommands) instead
 * of at start-up: about 10 ms of every `kimi --help` and agent start. Other runs import the
 * package.
 *
 * @module
 */
import type * as Commander from "@commander-js/extra-typings";
import { lazyPackage } from "../lazy_import.ts";
import { withPrebundle } from "../prebundle/load.ts";

const commander: typeof Commander = await withPrebundle(
  "commander",
  () => lazyPackage<typeof Commander>("@commander-js/extra-typings"),
);

/** commander's `Command`. */
export const Command: typeof Commander.Command = commander.Command;
/** commander's `Option`. */
export const Option: typeof Commander.Option = commander.Option;
/** commander's `CommanderError` (what `exitOverride()` makes the parser throw). */
export const CommanderError: typeof Commander.CommanderError = commander.CommanderError;
/** commander's `InvalidArgumentError` (for option value parsers). */
export const InvalidArgumentError: typeof Commander.InvalidArgumentError =
  commander.InvalidArgumentError;
