/**
 * `/web`: end the shell and hand the current session to `kimi web` (the server starts with its
 * defaults and opens this session in the browser, the token in the URL fragment).
 *
 * @module
 */
import type { ShellCommand } from "./command.ts";

/** The `/web` command. */
export const webCommand: ShellCommand = {
  name: "web",
  aliases: [],
  description: "Open this session in the browser (starts kimi web)",
  run(ctx) {
    ctx.print("Handing this session to kimi web…");
    return Promise.resolve({ switchTo: "web" as const });
  },
};
