/**
 * Every way kimi is started passes its V8 flags (`lib/runtime_flags.ts`): the shebang of
 * `main.ts`, the `start` task, the README's commands, the background task worker, the editor
 * login and the wire client. The launchers and `deno compile` are checked where they are
 * tested (`tests/e2e/cli_messages_test.ts`, `tests/unit/build/build_test.ts`).
 *
 * @module
 */
import { assert, assertEquals } from "../../helpers/assert.ts";
import { DENO_V8_FLAGS_ARG, V8_FLAGS } from "../../../lib/runtime_flags.ts";
import { keepAliveWorkerLauncher } from "../../../lib/background/settings.ts";
import { loginCommandLine } from "../../../lib/ui/acp/kimi_code_login.ts";
import { wireServerArgs } from "../../../lib/wire/client.ts";

const ROOT = new URL("../../../", import.meta.url);
const read = (path: string) => Deno.readTextFile(new URL(path, ROOT));

Deno.test("runtime flags: one flag carries every V8 setting", () => {
  assertEquals(DENO_V8_FLAGS_ARG, `--v8-flags=${V8_FLAGS.join(",")}`);
  assert(V8_FLAGS.every((f) => f.startsWith("--") && !f.includes(",")));
});

Deno.test("runtime flags: the shebang of main.ts and the start task pass them", async () => {
  const shebang = (await read("main.ts")).split("\n")[0];
  assert(shebang.startsWith("#!/usr/bin/env -S deno run "), shebang);
  assert(shebang.split(" ").includes(DENO_V8_FLAGS_ARG), shebang);
  const tasks = JSON.parse(await read("deno.json")).tasks;
  assert(tasks.start.split(" ").includes(DENO_V8_FLAGS_ARG), tasks.start);
});

Deno.test("runtime flags: every README command that starts kimi directly passes them", async () => {
  const commands = (await read("README.md")).split("\n").filter((line) =>
    /^\s*deno (run|install)\b/.test(line) && /\bmain\.(ts|js)\b/.test(line)
  );
  assert(commands.length >= 6, `found only ${commands.length} commands`);
  for (const line of commands) {
    assert(line.split(/\s+/).includes(DENO_V8_FLAGS_ARG), `no V8 flags in: ${line.trim()}`);
  }
});

Deno.test("runtime flags: the background worker and the editor login start kimi with them", () => {
  const launcher = keepAliveWorkerLauncher();
  assert(launcher !== null);
  const worker = launcher({ taskDir: "/tmp/task", programs: ["/bin/sh"] });
  assertEquals(worker.slice(1, 4), ["run", "--no-prompt", DENO_V8_FLAGS_ARG]);
  const login = loginCommandLine("/tmp/share");
  assertEquals(login.args.slice(0, 3), ["run", "--no-prompt", DENO_V8_FLAGS_ARG]);
  assertEquals(login.args.at(-1), "login");
});

Deno.test("runtime flags: the wire client starts kimi with them", () => {
  const args = wireServerArgs(["--work-dir", "/w"]);
  assertEquals(args.slice(0, 4), ["run", "--no-prompt", DENO_V8_FLAGS_ARG, "-A"]);
  assert(args[4].endsWith("/main.ts"), args[4]);
  assertEquals(args.slice(5), ["--wire", "--work-dir", "/w"]);
});
