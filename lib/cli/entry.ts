/**
 * Top-level error handling around the CLI: an unexpected error prints its cause, where the
 * log is, and how to get more detail, then exits 1.
 *
 * @module
 */
import { shareDir } from "../config/share_dir.ts";
import { main } from "./main.ts";

/** Run the CLI and map unexpected errors to exit code 1. */
export async function runMain(args: string[]): Promise<number> {
  try {
    return await main(args);
  } catch (err) {
    const debug = args.includes("--debug");
    const msg = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    let logPath = "~/.kimi/logs/kimi.log";
    try {
      logPath = `${shareDir()}/logs/kimi.log`;
    } catch {
      // keep the default spelling
    }
    console.error(
      `${msg}\nSee logs: ${logPath}\nRun with --debug for full traceback, or run kimi export to share diagnostics.`,
    );
    if (debug && err instanceof Error && err.stack) console.error(err.stack);
    return 1;
  }
}
