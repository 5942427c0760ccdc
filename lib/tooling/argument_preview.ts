/**
 * A call's arguments in one line, for approval descriptions of tools whose arguments are free
 * JSON (plugin tools).
 *
 * @module
 */

/** How many characters of the arguments' JSON a description shows. */
const ARGS_DESCRIPTION_CHARS = 200;

/** The call's arguments for a one-line description: compact JSON, shortened. */
export function describeArguments(args: Record<string, unknown>): string {
  const keys = Object.keys(args);
  if (keys.length === 0) return "no arguments";
  const json = JSON.stringify(args);
  return `arguments ${
    json.length > ARGS_DESCRIPTION_CHARS ? json.slice(0, ARGS_DESCRIPTION_CHARS - 1) + "…" : json
  }`;
}
