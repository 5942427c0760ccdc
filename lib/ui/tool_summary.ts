/**
 * One-line summaries of tool calls for people (the shell's tool lines, print mode's human
 * output, a resumed session's transcript).
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
    if (typeof v === "string" && v) return shorten(v.replace(/\s+/g, " "), 60);
  }
  return "";
}

function shorten(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}
