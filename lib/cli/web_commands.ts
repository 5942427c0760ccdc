/**
 * `kimi web [options]` (the local server and browser UI, reference §A1) and
 * `kimi web rotate-token`. The server's modules (and Hono) load only when it runs.
 *
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import type { CliOptions } from "./options.ts";

/**
 * Register `web` and `web rotate-token` on the root command; `rootOptions` validates the root
 * flags (`--config-file`, `--model`, …) given before `web`.
 */
export function registerWebCommands(
  program: CommandUnknownOpts,
  rootOptions: () => CliOptions,
  setResult: (r: Promise<number>) => void,
): void {
  const web = program.command("web")
    .description("Run Kimi Code CLI web interface.")
    .helpOption("--help", "Show this message and exit.")
    .option("-h, --host <host>", "Bind to this address (wins over --network).")
    .option("-n, --network", "Bind to all interfaces (0.0.0.0).")
    .option("-p, --port <port>", "First port to try (the next 9 are tried when busy).", "5494")
    .option("--open", "Open the browser after start (default).")
    .option("--no-open", "Do not open the browser.")
    .option("--reload", "Auto-reload (not supported by this build).")
    .option("--auth-token <token>", "Use this access token (saved as the server's token).")
    .option("--allowed-origins <origins>", "Comma-separated origins allowed in public mode.")
    .option(
      "--dangerously-omit-auth",
      "Serve without a token (asks for confirmation off loopback).",
    )
    .option("--restrict-sensitive-apis", "Disable config and open-in APIs, restrict file reads.")
    .option("--no-restrict-sensitive-apis", "Keep sensitive APIs on in public mode.")
    .option("--lan-only", "Refuse peers outside private networks (default).")
    .option("--public", "Accept peers from any address (Origin checked).")
    .action((raw) => {
      const flags = raw as Record<string, unknown>;
      const opts = rootOptions();
      setResult(
        import("./run_web.ts").then((m) => m.runWebCommand(opts, flags)),
      );
    });
  web.command("rotate-token")
    .description("Replace the web server's access token (a running server uses it at once).")
    .action(() => {
      setResult(
        import("./run_web.ts").then((m) => m.rotateTokenCommand()),
      );
    });
}
