/**
 * Top-level error handling around the CLI: an unexpected error prints its cause, where the
 * log is, and how to get more detail, then exits 1.
 *
 * @module
 */
import { type AccessKind, grantingFlag } from "../tooling/scope.ts";
import { main } from "./main.ts";
import { fatalErrorText } from "./fatal_error.ts";
import { log } from "../log.ts";
import { normalizeSocksProxyEnv } from "../net/proxy_env.ts";

/** The `Deno.errors.NotCapable` behind an error (itself or its cause chain), if any. */
function notCapableCause(err: unknown): Error | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof Deno.errors.NotCapable) return e;
  }
  return null;
}

/**
 * The message for a permission Deno did not grant outside any tool call: what is missing, the
 * flag to add, and the ready-made profiles. No stack trace.
 */
export function missingPermissionMessage(err: Error): string {
  const m = /Requires (\w+) access to "([^"]*)"/.exec(err.message);
  const what = m
    ? `${m[1]} \`${m[2]}\` (needs ${grantingFlag(m[1] as AccessKind, m[2])})`
    : err.message.replace(/\s+/g, " ").trim().replace(/\.$/, "");
  return `kimi cannot continue: Deno did not grant this run a permission it needs: ${what}. ` +
    "kimi never shows Deno's permission prompt: run it again with that flag, or use a " +
    "permission profile: `deno task review`, `deno task workspace` or `deno task full` " +
    '(see "Permission profiles" in README.md).';
}

/** Run the CLI and map unexpected errors to exit code 1. */
export async function runMain(args: string[]): Promise<number> {
  normalizeSocksProxyEnv();
  try {
    return await main(args);
  } catch (err) {
    const denied = notCapableCause(err);
    if (denied) {
      console.error(missingPermissionMessage(denied));
      return 1;
    }
    const debug = args.includes("--debug");
    const msg = err instanceof Error ? err.message : String(err);
    let dir: string | null = null;
    try {
      // Loaded here, on this path only: `kimi --help` and friends never need it.
      const { shareDir } = await import("../config/share_dir.ts");
      dir = shareDir();
    } catch {
      // the default spelling below
    }
    if (err instanceof Error) log("ERROR", "cli", `Fatal error: ${err.stack ?? msg}`);
    const traceback = debug ? (err instanceof Error ? err.stack ?? msg : msg) : null;
    console.error(fatalErrorText(msg, dir, traceback));
    return 1;
  }
}
