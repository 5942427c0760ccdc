/**
 * Running `kimi vis`: start the viewer's server, print the banner with the URL (token in the
 * fragment), open the browser when asked, serve until Ctrl-C.
 *
 * @module
 */
import { ensureShareDir } from "../config/share_dir.ts";
import { startVisServer } from "../ui/vis/vis_server.ts";

/** Options of `kimi vis` after parsing. */
export interface VisCommandOptions {
  /** Session id to open. */
  sessionId?: string;
  /** Bind host. */
  host: string;
  /** First port to try. */
  port: number;
  /** Open the browser. */
  open: boolean;
  /** Fixed token. */
  authToken?: string;
}

function openBrowser(url: string): void {
  const cmd = Deno.build.os === "darwin"
    ? ["open", url]
    : Deno.build.os === "windows"
    ? ["cmd", "/c", "start", "", url]
    : ["xdg-open", url];
  try {
    const child = new Deno.Command(cmd[0], {
      args: cmd.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.status.catch(() => {});
    child.unref();
  } catch {
    // No browser opener: the URL is in the banner.
  }
}

/** Run `kimi vis` until interrupted; resolves with the exit code. */
export async function runVis(opts: VisCommandOptions): Promise<number> {
  const shareDir = await ensureShareDir();
  let server;
  try {
    server = await startVisServer({
      shareDir,
      host: opts.host,
      port: opts.port,
      authToken: opts.authToken,
      sessionId: opts.sessionId,
    });
  } catch (err) {
    console.error(`kimi vis: ${(err as Error).message}`);
    return 1;
  }
  const lines = [
    "",
    "  AGENT TRACING VISUALIZER (Technical Preview)",
    "",
    `  ➜  Local:   ${server.url}`,
  ];
  if (opts.host === "0.0.0.0" || opts.host === "::") {
    lines.push(
      `  ➜  Network: http://<this machine's LAN address>:${server.port}/vis (same token)`,
      "  Anyone on the network with the token can read every recorded session.",
    );
  }
  lines.push("", "  Press Ctrl-C to stop.", "");
  console.log(lines.join("\n"));
  if (opts.open) openBrowser(server.url);
  const stop = () => server.shutdown();
  try {
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
  } catch {
    // Signals unavailable (Windows SIGTERM): Ctrl-C still ends the process.
  }
  await server.finished;
  return 0;
}
