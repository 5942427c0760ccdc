/**
 * The release notes shipped with the program (`/changelog`, `/release-notes`), newest first.
 *
 * @module
 */
import { VERSION } from "./version.ts";

/** The notes of one release. */
export interface ReleaseNotes {
  /** Version, e.g. `1.49.0`. */
  version: string;
  /** One line per change. */
  notes: readonly string[];
}

/** Every release's notes, newest first. */
export const RELEASE_NOTES: readonly ReleaseNotes[] = [
  {
    version: "1.49.0",
    notes: [
      "One Deno program: download one executable, `deno run` it from a URL, or lock it down " +
      "to the narrowest --allow-* permissions (a hard floor beneath approvals).",
      "Drop-in with Kimi Code CLI 1.49: flags, ~/.kimi (KIMI_SHARE_DIR), config.toml, session " +
      "files, print mode, `kimi acp`, `kimi mcp`, agent YAML specs, skills and flows, AGENTS.md.",
      "Wire protocol 1.12 (1.10 clients keep working): 1.11 approval rule choices (approve " +
      "always), 1.12 Notification events for finished background tasks and agents.",
      "Approval rules (allow/ask/deny, `/permissions`) that see through sudo, env, xargs and " +
      "bash -c; shell commands confined with bubblewrap where available.",
      "Shell: /fork, /btw side questions, /task browser, /usage token totals, /reload, /hooks, " +
      "/changelog, /feedback; Shift-Tab toggles plan mode, Ctrl-O edits the input in $EDITOR, " +
      "Ctrl-V pastes a clipboard image, large pastes fold into a placeholder, @image.png " +
      "attaches an image.",
      "Kimi completion-token budget clamped to the remaining context " +
      "(KIMI_MODEL_MAX_COMPLETION_TOKENS); empty reasoning content kept as a think part.",
    ],
  },
  {
    version: "1.46.0",
    notes: [
      "ACP: `session/load` replays the session's history to the editor.",
      "MCP connections are closed when kimi shuts down.",
    ],
  },
  {
    version: "1.45.0",
    notes: ["Shell: `/clear` is an alias of `/new` (it starts a new session)."],
  },
  {
    version: "1.44.0",
    notes: ["Slash command aliases: `/h` and `/?` for `/help`, `/status` for `/usage`."],
  },
  {
    version: "1.43.0",
    notes: ["OAuth tokens of MCP servers are kept in `~/.kimi/mcp-oauth/`."],
  },
  {
    version: "1.42.0",
    notes: [
      "Wire protocol 1.10: `StepRetry` events while a model call is retried.",
      "Windows: the Shell tool runs Git Bash.",
    ],
  },
  {
    version: "1.40.0",
    notes: [
      "`--afk` and `/afk`: approve actions and dismiss questions while away; yolo no longer " +
      "dismisses questions.",
      "The default `max_steps_per_turn` is 1000.",
    ],
  },
];

/** The notes of the `count` newest releases (this one first). */
export function recentReleaseNotes(count = 5): readonly ReleaseNotes[] {
  return RELEASE_NOTES.slice(0, Math.max(1, count));
}

/** The notes of `version` (default: this program's), or null when none are shipped. */
export function releaseNotesFor(version: string = VERSION): ReleaseNotes | null {
  return RELEASE_NOTES.find((r) => r.version === version) ?? null;
}
