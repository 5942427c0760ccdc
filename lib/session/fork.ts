/**
 * Forking a session (`/fork`): a new session of the same work dir that starts with a copy of
 * the conversation (`context.jsonl`), the recorded wire (`wire.jsonl`, so the title and replay
 * carry over), the session state (approvals, workspace dirs, todos, plan mode) and the file
 * snapshots `/undo` restores from. The original is left untouched.
 *
 * Every file of the fork is written atomically (temp + rename), so an interrupted fork leaves at
 * worst an empty session, never a half-copied one that looks complete.
 *
 * @module
 */
import { join } from "node:path";
import { atomicWriteBytes } from "../fs/atomic_write.ts";
import { Session } from "./session.ts";
import { saveState } from "./state.ts";

/** Options of {@link forkSession}. */
export interface ForkOptions {
  /** Title of the fork (default: `Fork of <original title>`). */
  title?: string;
}

/** Copy `source` into a new session of the same work dir; resolves with the fork. */
export async function forkSession(source: Session, opts: ForkOptions = {}): Promise<Session> {
  const originalTitle = await source.title();
  const fork = await Session.create({ shareDir: source.shareDir, workDir: source.workDir });
  try {
    await copyIfPresent(source.wireFile, fork.wireFile);
    await copyTree(join(source.dir, "snapshots"), join(fork.dir, "snapshots"));
    fork.state = {
      ...structuredClone(source.state),
      custom_title: opts.title ?? `Fork of ${originalTitle}`.slice(0, 200),
      title_generated: false,
      archived: false,
      archived_at: null,
    };
    // written as is: the fork's title must not be reloaded from the (absent) file
    await saveState(fork.dir, fork.state, { keepExternalFields: false });
    // the context last: a fork whose context is in place is complete
    await copyIfPresent(source.contextFile, fork.contextFile);
  } catch (err) {
    await fork.delete().catch(() => {});
    throw err;
  }
  return fork;
}

async function copyIfPresent(from: string, to: string): Promise<void> {
  let data: Uint8Array;
  try {
    data = await Deno.readFile(from);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  await atomicWriteBytes(to, data);
}

async function copyTree(from: string, to: string): Promise<void> {
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(from));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  await Deno.mkdir(to, { recursive: true });
  for (const e of entries) {
    // snapshots are plain files and dirs; links are not followed out of the session
    if (e.isDirectory) await copyTree(join(from, e.name), join(to, e.name));
    else if (e.isFile) await copyIfPresent(join(from, e.name), join(to, e.name));
  }
}
