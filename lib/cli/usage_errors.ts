/**
 * Usage errors as the reference's command line (Click) words and numbers them: one message per
 * mistake, printed under the usage line, exit code 2.
 *
 * @module
 */
import type { CommanderError } from "@commander-js/extra-typings";

/** Exit code of a usage error (Click's). */
export const USAGE_EXIT_CODE = 2;

/**
 * A usage error: printed with a usage hint, exit code 2. With a `paramHint` the message reads
 * `Invalid value for <hint>: <message>`, as Click's `BadParameter` does.
 */
export class UsageError extends Error {
  /** The flag the error is about (e.g. `--config`), if any. */
  readonly paramHint: string | null;
  /** Create the error. */
  constructor(message: string, paramHint?: string) {
    super(paramHint ? `Invalid value for ${paramHint}: ${message}` : message);
    this.name = "UsageError";
    this.paramHint = paramHint ?? null;
  }
}

/**
 * The full text printed for a usage error of `command` (`kimi`, `kimi mcp add`, ...), whose
 * usage line reads `usage` after the command (Click's spelling: `[OPTIONS] COMMAND [ARGS]...`,
 * `[OPTIONS] NAME [TARGET]...`).
 */
export function usageErrorText(
  message: string,
  command = "kimi",
  usage = "[OPTIONS] COMMAND [ARGS]...",
): string {
  return `Usage: ${command} ${usage}\nTry '${command} -h' for help.\n\nError: ${message}`;
}

/** What {@link clickUsage} reads of a command. */
export interface UsageShape {
  /** Whether it has subcommands. */
  hasCommands: boolean;
  /** Its positional arguments. */
  args: readonly { name: string; required: boolean; variadic: boolean }[];
}

/** A command's usage after its name, in Click's spelling (`[OPTIONS] NAME [TARGET]...`). */
export function clickUsage(shape: UsageShape): string {
  const parts = ["[OPTIONS]"];
  if (shape.hasCommands) parts.push("COMMAND [ARGS]...");
  for (const a of shape.args) {
    const name = a.name.toUpperCase();
    parts.push((a.required ? name : `[${name}]`) + (a.variadic ? "..." : ""));
  }
  return parts.join(" ");
}

/**
 * Click's wording for a commander parse error, or `null` for an error that is not a usage
 * mistake (help or version shown).
 */
export function commanderUsageMessage(
  err: CommanderError,
  operands: readonly string[] = [],
): string | null {
  const msg = err.message.replace(/^error:\s*/, "");
  switch (err.code) {
    case "commander.helpDisplayed":
    case "commander.help":
    case "commander.version":
      return null;
    case "commander.optionMissingArgument": {
      const flag = optionFlag(msg);
      return flag ? `Option '${flag}' requires an argument.` : capitalize(msg);
    }
    case "commander.unknownOption": {
      const m = /unknown option '([^']+)'(?:\s*\(Did you mean (\S+)\?\))?/.exec(msg);
      if (!m) return capitalize(msg);
      return `No such option: ${m[1]}` + (m[2] ? ` Did you mean ${m[2]}?` : "");
    }
    case "commander.invalidArgument": {
      // "option '--max-steps-per-turn <n>' argument '0' is invalid. 0 is not in the range x>=1."
      const m = /option '([^']+)' argument '([^']*)' is invalid\.\s*(.*)$/s.exec(msg);
      if (m) {
        const choices = /^Allowed choices are (.*)\.$/.exec(m[3]);
        const why = choices
          ? `'${m[2]}' is not one of ${choices[1].split(", ").map((c) => `'${c}'`).join(", ")}.`
          : m[3];
        return `Invalid value for '${firstLongFlag(m[1])}': ${why}`;
      }
      const a = /command-argument value '(?:[^']*)' is invalid for argument '([^']+)'\.\s*(.*)$/s
        .exec(msg);
      if (a) return `Invalid value for '${a[1].toUpperCase()}': ${a[2]}`;
      return capitalize(msg);
    }
    case "commander.excessArguments": {
      // "too many arguments. Expected 0 arguments but got 2." — Click names the extra words.
      const m = /Expected (\d+) arguments? but got (\d+)/.exec(msg);
      const extras = m ? operands.slice(Number(m[1])) : [];
      if (!extras.length) return capitalize(msg);
      return `Got unexpected extra argument${extras.length > 1 ? "s" : ""} (${extras.join(" ")})`;
    }
    case "commander.unknownCommand": {
      const m = /unknown command '([^']+)'(?:\s*\(Did you mean (\S+)\?\))?/.exec(msg);
      if (!m) return capitalize(msg);
      return `No such command '${m[1]}'.` + (m[2] ? ` Did you mean '${m[2]}'?` : "");
    }
    case "commander.missingArgument": {
      const m = /missing required argument '([^']+)'/.exec(msg);
      return m ? `Missing argument '${m[1].toUpperCase()}'.` : capitalize(msg);
    }
    case "commander.missingMandatoryOptionValue": {
      const flag = optionFlag(msg);
      return flag ? `Missing option '${flag}'.` : capitalize(msg);
    }
    default:
      return capitalize(msg);
  }
}

function optionFlag(msg: string): string | null {
  const m = /option '([^']+)'/.exec(msg);
  return m ? firstLongFlag(m[1]) : null;
}

/** `-c, --config <text>` → `--config`. */
function firstLongFlag(spec: string): string {
  const flags = spec.split(/[ ,|]+/).filter((f) => f.startsWith("-"));
  return flags.find((f) => f.startsWith("--")) ?? flags[0] ?? spec;
}

function capitalize(s: string): string {
  const t = s.trim();
  return t ? t[0].toUpperCase() + t.slice(1) : t;
}
