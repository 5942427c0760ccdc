#!/usr/bin/env -S deno run --no-prompt --v8-flags=--max-semi-space-size=2,--min-semi-space-size=2 -A
/**
 * `kimi`: the command-line entry point. `kimi --version` answers before anything else loads.
 *
 * @module
 */
import { prepareDependencies } from "./lib/dependency_cache.ts";
import { startupPermissionProblem } from "./lib/sandbox/startup_permissions.ts";
import { VERSION } from "./lib/version.ts";

/** Subcommands of `kimi`; any other first argument starts the agent. */
const SUBCOMMANDS = new Set(["info", "mcp", "export", "acp", "help"]);

/**
 * Whether `args` will most likely start the agent (not `--help`, `--version` or a
 * subcommand). A wrong guess only loads modules that end up unused.
 */
export function startsAgent(args: readonly string[]): boolean {
  if (args.length > 0 && SUBCOMMANDS.has(args[0])) return false;
  return !args.some((a) => a === "-h" || a === "--help" || a === "-V" || a === "--version");
}

if (import.meta.main) {
  const args = Deno.args;
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
    console.log(`kimi, version ${VERSION}`);
    Deno.exit(0);
  }
  if (args[0] === "__background-task-worker") {
    // A detached background task worker (keep_alive_on_exit): no CLI, no UI.
    const { runWorker } = await import("./lib/background/worker.ts");
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
  // A first run from a checkout fetches every npm package now, quietly, behind one line of its
  // own: Deno's download progress would otherwise draw over the UI when a module loads late.
  if (here.protocol === "file:") {
    await prepareDependencies({
      projectDir: decodeURIComponent(here.pathname).replace(/\/$/, ""),
      say: (line) => console.error(line),
    });
  }
  // Deno loads these only when the call runs (`"unstable": ["lazy-dynamic-imports"]` in
  // deno.json; see README "Lazy dynamic imports"). An agent run starts loading its modules now,
  // while the command line parser loads and parses.
  if (startsAgent(args)) {
    import("./lib/cli/run_agent.ts")
      .catch(() => {});
  }
  const { runMain } = await import("./lib/cli/entry.ts");
  Deno.exit(await runMain(args));
}
