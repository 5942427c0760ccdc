/**
 * `kimi export [SESSION_ID] [-o PATH] [-y]`: zip a session directory, recent logs and a
 * manifest so a user can share diagnostics.
 *
 * @module
 */
import { zipSync } from "fflate";
import { ensureShareDir } from "../config/share_dir.ts";
import { Session } from "../session/session.ts";
import { LOCK_FILE } from "../session/lock.ts";
import { VERSION } from "../version.ts";
import { safeGetEnv } from "./run_agent.ts";

/** Options of {@link exportSession}. */
export interface ExportOptions {
  /** Session id; default: the work dir's last session. */
  sessionId?: string;
  /** Output path; default `<share dir>/exports/session-<id>.zip`. */
  output?: string;
  /** Skip the confirmation. */
  yes: boolean;
  /** Work dir (for lookup by id and for the default session). */
  workDir: string;
}

/** Largest total size of logs put in the archive. */
export const MAX_LOG_BYTES = 100 * 1024 * 1024;
const DAY_MS = 24 * 3600 * 1000;

async function collect(dir: string, prefix: string, out: Record<string, Uint8Array>) {
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.name.startsWith(LOCK_FILE)) continue; // who holds the session is not shared
    if (e.isDirectory) await collect(p, `${prefix}${e.name}/`, out);
    else if (e.isFile) out[`${prefix}${e.name}`] = await Deno.readFile(p);
  }
}

async function confirm(question: string): Promise<boolean> {
  await Deno.stdout.write(new TextEncoder().encode(`${question} [y/N] `));
  const buf = new Uint8Array(64);
  const n = await Deno.stdin.read(buf);
  const answer = new TextDecoder().decode(buf.subarray(0, n ?? 0)).trim().toLowerCase();
  return answer === "y" || answer === "yes";
}

/**
 * The lines of a log tagged with `sessionId` (`... | module | <id> - message`), with the
 * untagged continuation lines (stack traces) that follow them.
 */
export function sessionLogLines(text: string, sessionId: string): string {
  const out: string[] = [];
  let keep = false;
  const header = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \| \w+ \| [^|]* \| (\S*) - /;
  for (const line of text.split("\n")) {
    const m = header.exec(line);
    if (m) keep = m[1] === sessionId;
    if (keep && line) out.push(line);
  }
  return out.length > 0 ? out.join("\n") + "\n" : "";
}

/** Export a session; resolves with the exit code. */
export async function exportSession(opts: ExportOptions): Promise<number> {
  const shareDir = await ensureShareDir(safeGetEnv);
  let session: Session | null;
  if (opts.sessionId) {
    session = await Session.find({ shareDir, workDir: opts.workDir, id: opts.sessionId });
    if (!session) {
      console.error(`Session '${opts.sessionId}' not found for ${opts.workDir}.`);
      return 1;
    }
  } else {
    try {
      session = await Session.continue({ shareDir, workDir: opts.workDir });
    } catch (err) {
      console.error((err as Error).message);
      return 1;
    }
    if (!opts.yes) {
      if (!Deno.stdin.isTerminal()) {
        console.error(
          `Refusing to export session ${session.id} without confirmation: pass -y/--yes.`,
        );
        return 1;
      }
      if (!(await confirm(`Export session ${session.id} (${await session.title()})?`))) {
        console.error("Export cancelled.");
        return 1;
      }
    }
  }
  const files: Record<string, Uint8Array> = {};
  await collect(session.dir, `session/`, files);
  const logsDir = `${shareDir}/logs`;
  const now = Date.now();
  let logBytes = 0;
  try {
    for await (const e of Deno.readDir(logsDir)) {
      if (!e.isFile) continue;
      const st = await Deno.stat(`${logsDir}/${e.name}`);
      const age = Math.abs(now - (st.mtime?.getTime() ?? now));
      if (age > 2 * DAY_MS || logBytes + st.size > MAX_LOG_BYTES) continue;
      // only this session's lines: other sessions' prompts and paths are not the user's to share
      const mine = sessionLogLines(await Deno.readTextFile(`${logsDir}/${e.name}`), session.id);
      if (!mine) continue;
      const bytes = new TextEncoder().encode(mine);
      files[`logs/${e.name}`] = bytes;
      logBytes += bytes.length;
    }
  } catch {
    // no logs
  }
  const manifest = {
    session_id: session.id,
    work_dir: session.workDir,
    kimi_cli_version: VERSION,
    exported_at: new Date().toISOString(),
    files: Object.keys(files).sort(),
  };
  files["manifest.json"] = new TextEncoder().encode(JSON.stringify(manifest, null, 2) + "\n");
  let output = opts.output;
  if (output === undefined) {
    // not the current directory: an archive of prompts and logs must not land in a repository
    await Deno.mkdir(`${shareDir}/exports`, { recursive: true });
    output = `${shareDir}/exports/session-${session.id}.zip`;
  }
  await Deno.writeFile(output, zipSync(files));
  console.log(`Exported session ${session.id} to ${output}`);
  return 0;
}
