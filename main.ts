#!/usr/bin/env -S deno run --no-prompt --v8-flags=--max-semi-space-size=2 -A
/**
 * `kimi`: the command-line entry point. `kimi --version` answers before anything else loads.
 *
 * @module
 */
import { lazyImport } from "./lib/lazy_import.ts";
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
    const worker = "./lib/background/worker.ts";
    const { runWorker } = await import(worker) as typeof import("./lib/background/worker.ts");
    Deno.exit(await runWorker(args.slice(1)));
  }
  // zod compiles a specialised parser (\`new Function\`) for each object schema on its first
  // parse; a CLI parses most of its schemas once or a few times, where compiling costs more
  // than it saves. Set before zod loads (zod reads this shared global config when it loads).
  (globalThis as { __zod_globalConfig?: { jitless?: boolean } }).__zod_globalConfig ??= {
    jitless: true,
  };
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
  // A run-time specifier: Deno preloads literal dynamic imports, which would make even the
  // `--version` fast path above load the whole CLI graph. An agent run starts loading its
  // modules now, while the command line parser loads and parses.
  if (startsAgent(args)) {
    lazyImport<typeof import("./lib/cli/run_agent.ts")>("./lib/cli/run_agent.ts", import.meta.url)
      .catch(() => {});
  }
  const { runMain } = await lazyImport<typeof import("./lib/cli/entry.ts")>(
    "./lib/cli/entry.ts",
    import.meta.url,
  );
  Deno.exit(await runMain(args));
}
