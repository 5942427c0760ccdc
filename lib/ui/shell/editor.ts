/**
 * `/editor`: compose a message in the user's editor (`default_editor`, `$VISUAL`, `$EDITOR`,
 * else `vi`).
 *
 * @module
 */
import type { ShellContext } from "./shell_context.ts";

/**
 * Open the editor on a temp file holding `initial`; resolves with the text, or null when it
 * failed.
 */
export async function composeInEditor(
  ctx: Pick<ShellContext, "app" | "term" | "print">,
  initial = "",
): Promise<string | null> {
  let editor = ctx.app.config.default_editor;
  try {
    editor ||= Deno.env.get("VISUAL") ?? Deno.env.get("EDITOR") ?? "";
  } catch {
    // env not readable
  }
  editor ||= "vi";
  const file = await Deno.makeTempFile({ prefix: "kimi-message-", suffix: ".md" });
  if (initial) await Deno.writeTextFile(file, initial);
  ctx.term.suspend();
  try {
    const status = await new Deno.Command("sh", {
      args: ["-c", `${editor} "$1"`, "sh", file],
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn().status;
    ctx.term.resume();
    if (!status.success) {
      ctx.print(`The editor (${editor}) exited with code ${status.code}; nothing was sent.`);
      return null;
    }
    return await Deno.readTextFile(file);
  } catch (err) {
    ctx.term.resume();
    ctx.print(
      `Could not run the editor "${editor}": ${
        (err as Error).message
      }. Set $EDITOR or default_editor.`,
    );
    return null;
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}
