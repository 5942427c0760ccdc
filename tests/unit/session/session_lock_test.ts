import { assert, assertEquals, assertMatch } from "../../helpers/assert.ts";
import { LOCK_FILE, SessionLock, SessionLockedError } from "../../../lib/session/lock.ts";

async function lockedError(p: Promise<unknown>): Promise<SessionLockedError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SessionLockedError) return err;
    throw err;
  }
  throw new Error("expected SessionLockedError");
}

function startTicks(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

Deno.test("session lock: exclusive, names its holder, released only by its owner", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const lock = await SessionLock.acquire(dir, { sessionId: "s1" });
    const held = JSON.parse(await Deno.readTextFile(`${dir}/${LOCK_FILE}`));
    assertEquals(held.pid, Deno.pid);
    assertEquals(held.hostname, Deno.hostname());
    const err = await lockedError(SessionLock.acquire(dir, { sessionId: "s1" }));
    assertMatch(
      err.message,
      new RegExp(`^Session s1 is in use by another kimi process \\(pid ${Deno.pid}, since `),
    );
    await lock.release();
    await lock.release();
    const again = await SessionLock.acquire(dir, { sessionId: "s1" });
    await again.release();
    // No temp files are left behind.
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assertEquals(names, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("session lock: a dead holder's lock and a reused pid's lock are taken over; another host's is not", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/${LOCK_FILE}`;
  const sleeper = new Deno.Command("sleep", { args: ["30"] }).spawn();
  try {
    const dead = new Deno.Command("true").spawn();
    await dead.status;
    const write = (holder: Record<string, unknown>) =>
      Deno.writeTextFile(path, JSON.stringify({ since: "2026-01-01T00:00:00.000Z", ...holder }));
    const host = Deno.hostname();

    await write({ pid: dead.pid, hostname: host, process_start: 1 });
    const a = await SessionLock.acquire(dir, { sessionId: "s" });
    assertEquals(JSON.parse(await Deno.readTextFile(path)).pid, Deno.pid);
    await a.release();

    // The pid is alive but belongs to a process started at another time: reused.
    await write({ pid: sleeper.pid, hostname: host, process_start: startTicks(sleeper.pid) + 1 });
    const b = await SessionLock.acquire(dir, { sessionId: "s" });
    await b.release();

    // The same live process: held.
    await write({ pid: sleeper.pid, hostname: host, process_start: startTicks(sleeper.pid) });
    const live = await lockedError(SessionLock.acquire(dir, { sessionId: "s" }));
    assertEquals(live.holder.pid, sleeper.pid);
    assertMatch(live.message, /since 2026-01-01T00:00:00\.000Z\)/);

    // Another host cannot be checked: never stale.
    await write({ pid: dead.pid, hostname: "elsewhere.example", process_start: null });
    const other = await lockedError(SessionLock.acquire(dir, { sessionId: "s" }));
    assertMatch(other.message, new RegExp(`pid ${dead.pid} on elsewhere\\.example, since`));
    assert(other.message.endsWith(`If that process no longer exists, delete ${path}.`));
    assert(!live.message.includes("delete"), "a checked holder needs no manual step");

    // Waiting: the lock is taken as soon as its holder lets go.
    await write({ pid: sleeper.pid, hostname: host, process_start: startTicks(sleeper.pid) });
    const waiting = SessionLock.acquire(dir, { sessionId: "s", wait: true, pollMs: 20 });
    await new Promise((r) => setTimeout(r, 100));
    await Deno.remove(path);
    const c = await waiting;
    assert(c instanceof SessionLock);
    await c.release();
  } finally {
    sleeper.kill();
    await sleeper.status;
    await Deno.remove(dir, { recursive: true });
  }
});
