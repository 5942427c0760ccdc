/**
 * `kimi vis [session] [-h/--host] [-n/--network] [-p/--port] [--open/--no-open] [--auth-token]`:
 * registration of the tracing viewer's command; the server loads only when it runs.
 *
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import { UsageError } from "./options.ts";
import type { VisCommandOptions } from "./vis_run.ts";

/** Register `vis` on the root command; `setResult` receives the exit code. */
export function registerVisCommand(
  program: CommandUnknownOpts,
  setResult: (r: Promise<number>) => void,
): void {
  program.command("vis")
    .description(
      "Open the agent tracing visualizer (read-only browser view of recorded sessions).",
    )
    .helpOption("--help", "Show this message and exit.")
    .argument("[session]", "Session id to open.")
    .option("-h, --host <host>", "Address to bind (default 127.0.0.1, loopback only).")
    .option("-n, --network", "Listen on every interface (reach it from the LAN; token required).")
    .option("-p, --port <port>", "Port to use; the next 9 are tried when it is taken.", "5495")
    .option("--open", "Open the browser (default).")
    .option("--no-open", "Do not open the browser.")
    .option("--auth-token <token>", "Use this access token instead of the persisted one.")
    .option("--reload", "Auto-reload (not supported).")
    .action((session, raw) => {
      const o = raw as {
        host?: string;
        network?: boolean;
        port: string;
        open?: boolean;
        authToken?: string;
        reload?: boolean;
      };
      if (o.reload) throw new UsageError("--reload is not supported by this kimi vis.");
      const port = Number(o.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new UsageError(`Invalid value for '--port' / '-p': '${o.port}' is not a valid port.`);
      }
      if (o.host && o.network) {
        throw new UsageError("Pass either --host or --network, not both.");
      }
      const opts: VisCommandOptions = {
        sessionId: session as string | undefined,
        host: o.host ?? (o.network ? "0.0.0.0" : "127.0.0.1"),
        port,
        open: o.open !== false,
        authToken: o.authToken,
      };
      setResult(
        import("./vis_run.ts").then((m) => m.runVis(opts)),
      );
    });
}
