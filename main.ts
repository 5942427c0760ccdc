#!/usr/bin/env -S deno run --no-prompt -A
/**
 * `kimi`: the command-line entry point. `kimi --version` answers before anything else loads.
 *
 * @module
 */
import { startupPermissionProblem } from "./lib/sandbox/startup_permissions.ts";
import { VERSION } from "./lib/version.ts";

if (import.meta.main) {
  const args = Deno.args;
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
    console.log(`kimi, version ${VERSION}`);
    Deno.exit(0);
  }
  if (args[0] === "__background-task-worker") {
    // A detached background task worker (keep_alive_on_exit): no CLI, no UI.
    const worker = "./lib/background/worker.ts";
    const { runWorker } = await import(worker) as typeof import("./lib/background/worker.ts");
    Deno.exit(await runWorker(args.slice(1)));
  }
  const here = new URL(".", import.meta.url);
  const problem = startupPermissionProblem(
    args,
    here.protocol === "file:" ? decodeURIComponent(here.pathname) : null,
  );
  if (problem !== null) {
    console.error(problem);
    Deno.exit(1);
  }
  // A non-literal specifier: Deno preloads literal dynamic imports, which would make even the
  // `--version` fast path above load the whole CLI graph.
  const entry = "./lib/cli/entry.ts";
  const { runMain } = await import(entry) as typeof import("./lib/cli/entry.ts");
  Deno.exit(await runMain(args));
}
