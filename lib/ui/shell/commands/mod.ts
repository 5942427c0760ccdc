/**
 * Shell commands that live in their own modules, in `/help` order.
 *
 * @module
 */
import { changelogCommand } from "./changelog.ts";
import type { ShellCommand } from "./command.ts";
import { feedbackCommand } from "./feedback.ts";
import { forkCommand } from "./fork.ts";
import { hooksCommand } from "./hooks.ts";
import { pluginsCommand } from "./plugins.ts";
import { reloadCommand } from "./reload.ts";
import { taskCommand } from "./task.ts";
import { usageCommand } from "./usage.ts";
import { visCommand } from "./vis.ts";
import { webCommand } from "./web.ts";

/** Shell commands defined in this directory. */
export const MORE_SHELL_COMMANDS: readonly ShellCommand[] = [
  usageCommand,
  forkCommand,
  taskCommand,
  reloadCommand,
  hooksCommand,
  pluginsCommand,
  changelogCommand,
  feedbackCommand,
  webCommand,
  visCommand,
];

/** `/help` lines of the keys of lib/ui/shell/key_bindings.ts. */
export const EXTRA_KEYS_HELP: readonly string[] = [
  "  Shift-Tab toggle plan mode · Ctrl-O edit the input in $EDITOR",
  "  Ctrl-V paste an image from the clipboard · @file.png attach an image (video: @clip.mp4)",
  "  Large pastes fold into [pasted N lines], expanded when sent",
];
