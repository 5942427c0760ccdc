#!/usr/bin/env -S deno run --no-prompt -A
/**
 * `kimi`: the command-line entry point. `kimi --version` answers before anything else loads.
 *
 * @module
 */
import { lazyImport } from "./lib/lazy_import.ts";
import { startupPermissionProblem } from "./lib/sandbox/startup_permissions.ts";
import { VERSION } from "./lib/version.ts";

if (import.meta.main) {
  const args = Deno.args;
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
    console.log(`kimi, version ${VERSION}`);
    Deno.exit(0);
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
  // A run-time specifier: Deno preloads literal dynamic imports, which would make even the
  // `--version` fast path above load the whole CLI graph.
  const { runMain } = await lazyImport<typeof import("./lib/cli/entry.ts")>(
    "./lib/cli/entry.ts",
    import.meta.url,
  );
  Deno.exit(await runMain(args));
}
