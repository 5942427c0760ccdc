import { assert, assertEquals, assertMatch } from "../../helpers/assert.ts";
import { LOCK_FILE, SessionLock, SessionLockedError } from "../../../lib/session/lock.ts";
import { exists } from "../../../lib/fs/exists.ts";
import { denoDir } from "../../helpers/kimi_process.ts";

async function lockedError(p: Promise<unknown>): Promise<SessionLockedError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SessionLockedError) return err;
    throw err;
  }
  throw new Error("expected SessionLockedError");
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

const LOCK_TS = new URL("../../../lib/session/lock.ts", import.meta.url).pathname;
const DENO_JSON = new URL("../../../deno.json", import.meta.url).pathname;

/** A Deno process (optionally under `wrap`, e.g. bwrap) holding the lock of `dir` until killed. */
async function spawnHolder(dir: string, wrap: string[] = []): Promise<Deno.ChildProcess> {
  const script = `${dir}/../holder-${crypto.randomUUID().slice(0, 8)}.ts`;
  await Deno.writeTextFile(
    script,
    `import { SessionLock } from ${JSON.stringify(LOCK_TS)};\n` +
      `await SessionLock.acquire(${JSON.stringify(dir)}, { sessionId: "s" });\n` +
      `console.log("locked " + Deno.pid);\n` +
      `await new Promise(() => setInterval(() => {}, 1000));\n`,
  );
  const argv = [...wrap, Deno.execPath(), "run", "-A", "--config", DENO_JSON, script];
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdout: "piped",
    stderr: "inherit",
    env: { DENO_DIR: denoDir() },
  }).spawn();
  // Wait for the state (the lock is held), not for a time.
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("locked")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the holder exited before locking: ${seen}`);
    seen += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return child;
}

async function stop(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGKILL");
  } catch {
    // already gone
  }
  await child.status;
}

Deno.test("session lock: a live holder whose pid means nothing here is never taken over; a killed holder's lock is free", async () => {
  const root = await Deno.makeTempDir();
  const dir = `${root}/session`;
  await Deno.mkdir(dir);
  const path = `${dir}/${LOCK_FILE}`;
  const holder = await spawnHolder(dir);
  try {
    // As a holder in another pid namespace would appear: its file names a pid that is dead
    // here. The kernel's lock, not the pid, decides: the session stays held.
    const dead = new Deno.Command("true").spawn();
    await dead.status;
    const named = JSON.parse(await Deno.readTextFile(path));
    await Deno.writeTextFile(path, JSON.stringify({ ...named, pid: dead.pid }) + "\n");
    const refused = await lockedError(SessionLock.acquire(dir, { sessionId: "s" }));
    assertEquals(refused.holder?.pid, dead.pid);
    assertMatch(refused.message, /^Session s is in use by another kimi process \(pid \d+, since /);
    assert(await exists(path), "a live holder's lock file is never deleted");

    // Waiting: the lock is taken as soon as its holder is gone, even killed without releasing.
    const waiting = SessionLock.acquire(dir, { sessionId: "s", wait: true, pollMs: 20 });
    await stop(holder);
    const mine = await waiting;
    assertEquals(JSON.parse(await Deno.readTextFile(path)).pid, Deno.pid);
    await mine.release();
    assert(!(await exists(path)));
  } finally {
    await stop(holder);
    await Deno.remove(root, { recursive: true });
  }
});

const BWRAP = (() => {
  try {
    return new Deno.Command("bwrap", {
      args: ["--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "true"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "session lock: a holder in another pid namespace is told from a dead one",
  ignore: !BWRAP,
  async fn() {
    const root = await Deno.makeTempDir();
    const dir = `${root}/session`;
    await Deno.mkdir(dir);
    const holder = await spawnHolder(dir, [
      "bwrap",
      "--die-with-parent",
      "--dev-bind",
      "/",
      "/",
      "--unshare-pid",
      "--proc",
      "/proc",
      "--",
    ]);
    try {
      const held = JSON.parse(await Deno.readTextFile(`${dir}/${LOCK_FILE}`));
      assert(held.pid < 10, `the holder's pid is one of its own namespace: ${held.pid}`);
      await lockedError(SessionLock.acquire(dir, { sessionId: "s" }));
      // Its namespace goes down with it: the lock is free once the kernel has closed its file.
      await stop(holder);
      const mine = await SessionLock.acquire(dir, { sessionId: "s", wait: true, pollMs: 20 });
      await mine.release();
    } finally {
      await stop(holder);
      await Deno.remove(root, { recursive: true });
    }
  },
});
