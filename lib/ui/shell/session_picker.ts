/**
 * Picking a session of the work dir (`kimi -S` without an id, and `/sessions`): title, age
 * and id of each, most recent first.
 *
 * @module
 */
import { Session } from "../../session/session.ts";
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
}

/** Let the user pick one of `sessions` on `term`; null on Escape. */
export async function pickSession(
  term: Terminal,
  sessions: Session[],
  opts: PickSessionOptions,
): Promise<Session | null> {
  const current = opts.current;
  const options = [];
  for (const s of sessions) {
    const mark = (s.state.print_run ? " · --print run" : "") +
      (s.id === current ? " (current)" : "");
    options.push({
      label: await s.title(),
      hint: `${ago(await s.updatedAt())} · ${s.id.slice(0, 8)}${mark}`,
    });
  }
  const picked = await select(term, {
    title: [style.bold("Resume a session"), style.dim(opts.escape)],
    options,
  });
  return picked === null ? null : sessions[picked[0]];
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
