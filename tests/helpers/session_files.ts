/**
 * The shared check that a share dir's session files are intact: every `*.jsonl` file is valid
 * JSON Lines (each line one JSON object, the file ending with a newline), `context.jsonl`
 * records are messages or `_`-prefixed bookkeeping records, `wire.jsonl` starts with its
 * metadata header and holds `{timestamp, message: {type, payload}}` records, and `state.json`
 * parses. `kimiSandbox().cleanup()` runs it after every e2e test.
 *
 * @module
 */

/** Options of {@link assertSessionFilesValid}. */
export interface SessionFilesCheckOptions {
  /**
   * Tolerate lines that do not parse (a record torn by `kill -9`, which readers skip). Every
   * file must still end with a newline.
   */
  allowTorn?: boolean;
}

/** Problems found in the session files under `shareDir` (empty when all is well). */
export async function sessionFileProblems(
  shareDir: string,
  opts: SessionFilesCheckOptions = {},
): Promise<string[]> {
  const problems: string[] = [];
  for (const dir of await sessionDirsOf(shareDir)) {
    for (const { path, name } of await filesUnder(dir)) {
      if (!name.endsWith(".jsonl") && name !== "state.json") continue;
      let text: string;
      try {
        text = await Deno.readTextFile(path);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) continue; // removed meanwhile
        throw err;
      }
      if (name === "state.json") {
        try {
          JSON.parse(text);
        } catch (err) {
          problems.push(`${path}: not valid JSON (${(err as Error).message})`);
        }
      } else {
        problems.push(...checkJsonl(path, text, opts));
      }
    }
  }
  return problems;
}

/** Throw when any session file under `shareDir` is not intact (see the module doc). */
export async function assertSessionFilesValid(
  shareDir: string,
  opts: SessionFilesCheckOptions = {},
): Promise<void> {
  const problems = await sessionFileProblems(shareDir, opts);
  if (problems.length > 0) {
    throw new Error(`Session files are not valid JSONL:\n  ${problems.join("\n  ")}`);
  }
}

/** Every file under `dir` (subagent sessions and snapshot indexes included). */
async function filesUnder(dir: string): Promise<{ path: string; name: string }[]> {
  const out: { path: string; name: string }[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) out.push(...await filesUnder(path));
      else if (e.isFile) out.push({ path, name: e.name });
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out;
}

async function sessionDirsOf(shareDir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const wd of Deno.readDir(`${shareDir}/sessions`)) {
      if (!wd.isDirectory) continue;
      for await (const s of Deno.readDir(`${shareDir}/sessions/${wd.name}`)) {
        if (s.isDirectory) out.push(`${shareDir}/sessions/${wd.name}/${s.name}`);
      }
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out;
}

function checkJsonl(path: string, text: string, opts: SessionFilesCheckOptions): string[] {
  if (text === "") return [];
  const problems: string[] = [];
  if (!text.endsWith("\n")) problems.push(`${path}: last record is not terminated by a newline`);
  const name = path.slice(path.lastIndexOf("/") + 1);
  const lines = text.split("\n");
  lines.pop();
  lines.forEach((line, i) => {
    const where = `${path}:${i + 1}`;
    if (line.trim() === "") {
      if (!opts.allowTorn) problems.push(`${where}: blank line`);
      return;
    }
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      if (!opts.allowTorn) problems.push(`${where}: not JSON: ${line.slice(0, 80)}`);
      return;
    }
    const problem = name === "wire.jsonl"
      ? wireProblem(rec, i)
      : name.startsWith("context")
      ? contextProblem(rec)
      : (rec === null || typeof rec !== "object" ? "not a JSON object" : null);
    if (problem) problems.push(`${where}: ${problem}`);
  });
  return problems;
}

function contextProblem(rec: unknown): string | null {
  if (rec === null || typeof rec !== "object" || Array.isArray(rec)) return "not a JSON object";
  const role = (rec as { role?: unknown }).role;
  if (typeof role !== "string") return "record without a role";
  if (!["system", "user", "assistant", "tool"].includes(role) && !role.startsWith("_")) {
    return `unknown role ${JSON.stringify(role)}`;
  }
  return null;
}

function wireProblem(rec: unknown, index: number): string | null {
  if (rec === null || typeof rec !== "object" || Array.isArray(rec)) return "not a JSON object";
  const r = rec as { type?: unknown; timestamp?: unknown; message?: unknown };
  if (index === 0) return r.type === "metadata" ? null : "first line is not the metadata header";
  if (typeof r.timestamp !== "number") return "record without a numeric timestamp";
  const m = r.message as { type?: unknown; payload?: unknown } | undefined;
  if (!m || typeof m.type !== "string" || typeof m.payload !== "object") {
    return "record without message.type / message.payload";
  }
  return null;
}
