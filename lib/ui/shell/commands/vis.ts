/**
 * `/vis`: end the shell and open the current session in `kimi vis`, the read-only tracing
 * viewer (reference Part C: "/vis in the shell switches to it").
 *
 * @module
 */
import type { ShellCommand } from "./command.ts";

/** The `/vis` command. */
export const visCommand: ShellCommand = {
  name: "vis",
  aliases: [],
  description: "Trace this session in the browser (starts kimi vis)",
  run(ctx) {
    ctx.print("Opening this session in kimi vis…");
    return Promise.resolve({ switchTo: "vis" as const });
  },
};
