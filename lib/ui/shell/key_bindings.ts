/**
 * The shell's extra prompt keys: Shift-Tab toggles plan mode, Ctrl-O edits the input in
 * `$EDITOR`, Ctrl-V pastes an image from the clipboard as an attachment, and large pastes fold
 * into a placeholder (expanded when sent).
 *
 * @module
 */
import type { PromptAttachments } from "./attachments.ts";
import { readClipboardImage } from "./clipboard.ts";
import type { Key } from "./keys.ts";
import type { EditorAccess } from "./line_editor.ts";

/** What the key bindings act on. */
export interface ShellKeyHost {
  /** Placeholders of the prompt. */
  attachments: PromptAttachments;
  /** Toggle plan mode; resolves to the new state. */
  togglePlanMode(): Promise<boolean>;
  /** Edit `text` in the user's editor; resolves with the new text or null (failed). */
  editInEditor(text: string): Promise<string | null>;
}

/** The key binding function for {@link LineEditorOptions.keyBindings}. */
export function shellKeyBindings(
  host: ShellKeyHost,
): (key: Key, edit: EditorAccess) => Promise<boolean> {
  return async (key, edit) => {
    switch (key.name) {
      case "shift-tab": {
        const on = await host.togglePlanMode();
        edit.hint(
          on
            ? "Plan mode ON: the agent plans and asks before changing files (Shift-Tab: off)."
            : "Plan mode OFF (Shift-Tab: on).",
        );
        return true;
      }
      case "ctrl-o": {
        if (!edit.atPrompt) {
          edit.hint("Ctrl-O opens the editor at the prompt, once the turn is over.");
          return true;
        }
        const text = await host.editInEditor(edit.text);
        if (text !== null) edit.setText(text.replace(/\n+$/, ""));
        return true;
      }
      case "ctrl-v": {
        const clip = await readClipboardImage();
        if (clip.kind === "image") {
          const before = edit.text && !/\s$/.test(edit.text) ? " " : "";
          edit.insert(`${before}${host.attachments.addImage(clip.mime, clip.bytes)} `);
        } else edit.hint(clip.message);
        return true;
      }
      case "paste": {
        const text = key.text ?? "";
        const folded = host.attachments.foldPaste(text);
        if (folded === text) return false;
        edit.insert(folded);
        return true;
      }
      default:
        return false;
    }
  };
}
