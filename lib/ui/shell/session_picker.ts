/**
 * Picking a session of the work dir (`kimi -S` without an id, and `/sessions`): title, age
 * and id of each, most recent first.
 *
 * @module
 */
import { Session } from "../../session/session.ts";
import { loadMetadata } from "../../session/metadata.ts";
import { Terminal } from "./terminal.ts";
import { style } from "./theme.ts";
import { select } from "./widgets.ts";

/** How long ago a time was, in words (`just now`, `5m ago`, `3h ago`, `2d ago`). */
export function ago(ms: number): string {
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** Options of {@link pickSession}. */
export interface PickSessionOptions {
  /** The running session's id (marked). */
  current?: string;
  /** What Escape does, shown under the title. */
  escape: string;
  /** The sessions of every work dir: Ctrl-A toggles between them and the work dir's. */
  allSessions?: () => Promise<Session[]>;
}

/** The sessions of every work dir kimi has used, most recently updated first. */
export async function sessionsOfAllWorkDirs(shareDir: string): Promise<Session[]> {
  const meta = await loadMetadata(shareDir);
  const all: { session: Session; updated: number }[] = [];
  for (const wd of meta.work_dirs) {
    if (wd.kaos !== "local") continue;
    for (const session of await Session.list({ shareDir, workDir: wd.path })) {
      all.push({ session, updated: await session.updatedAt() });
    }
  }
  return all.sort((a, b) => b.updated - a.updated).map((x) => x.session);
}

/** Let the user pick one of `sessions` on `term`; null on Escape. */
export async function pickSession(
  term: Terminal,
  sessions: Session[],
  opts: PickSessionOptions,
): Promise<Session | null> {
  const current = opts.current;
  const here = sessions[0]?.workDir ?? null;
  let all = false;
  while (true) {
    const shown = all && opts.allSessions ? await opts.allSessions() : sessions;
    const options = [];
    for (const s of shown) {
      const mark = (s.state.print_run ? " · --print run" : "") +
        (s.id === current ? " (current)" : "");
      const where = all && s.workDir !== here ? ` · ${s.workDir}` : "";
      options.push({
        label: await s.title(),
        hint: `${ago(await s.updatedAt())} · ${s.id.slice(0, 8)}${mark}${where}`,
      });
    }
    let toggled = false;
    const scope = opts.allSessions
      ? ` · Ctrl-A: ${all ? "this work dir only" : "all work dirs"}`
      : "";
    const picked = await select(term, {
      title: [
        style.bold(all ? "Resume a session (all work dirs)" : "Resume a session"),
        style.dim(opts.escape + scope),
      ],
      options: options.length > 0 ? options : [{ label: "(no sessions)" }],
      onKey: (key) => {
        if (key.name !== "ctrl-a" || !opts.allSessions) return false;
        toggled = true;
        term.inject({ name: "escape" });
        return true;
      },
    });
    if (toggled) {
      all = !all;
      continue;
    }
    return picked === null ? null : shown[picked[0]] ?? null;
  }
}

/**
 * `kimi -S` with no id: pick a session of the work dir on the process's terminal. Resolves
 * with the session, or null for a new one (none there, or Escape).
 */
export async function pickSessionAtStart(
  opts: { shareDir: string; workDir: string },
): Promise<Session | null> {
  const sessions = await Session.list(opts);
  if (sessions.length === 0) {
    console.error("kimi: no sessions in this work dir yet: starting a new one.");
    return null;
  }
  const term = new Terminal();
  term.start();
  try {
    return await pickSession(term, sessions, { escape: "Esc starts a new session instead" });
  } finally {
    term.clearLive();
    term.stop();
  }
}
