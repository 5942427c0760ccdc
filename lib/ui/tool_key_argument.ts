/**
 * The argument worth showing for a tool call (command, path, pattern, URL, ...): the shell's
 * tool lines and the ACP tool-call titles both use it.
 *
 * @module
 */

/** The argument worth showing for a tool call (command, path, pattern, URL, ...). */
export function keyArgument(name: string, args: string): string {
  let parsed: Record<string, unknown> | null = null;
  try {
    const v = JSON.parse(args || "{}");
    if (v && typeof v === "object") parsed = v as Record<string, unknown>;
  } catch {
    return "";
  }
  if (!parsed) return "";
  const keys: Record<string, string[]> = {
    Shell: ["command"],
    ReadFile: ["path"],
    ReadMediaFile: ["path"],
    WriteFile: ["path"],
    StrReplaceFile: ["path"],
    Glob: ["pattern"],
    Grep: ["pattern"],
    FetchURL: ["url"],
    SearchWeb: ["query"],
    Agent: ["description"],
    TaskOutput: ["task_id"],
    TaskStop: ["task_id"],
    Think: ["thought"],
  };
  const order = keys[name] ?? Object.keys(parsed);
  for (const k of order) {
    const v = parsed[k];
    if (typeof v === "string" && v) return shortenArg(v.replace(/\s+/g, " "), 60);
  }
  return "";
}

function shortenArg(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}
