/**
 * The built-in system prompt variables (`KIMI_NOW`, `KIMI_WORK_DIR`, `KIMI_WORK_DIR_LS`, ...)
 * and rendering an agent's system prompt with them.
 *
 * @module
 */
import { pathStatus } from "../fs/exists.ts";
import { basename, resolve } from "node:path";
import { loadAgentsMd } from "./agents_md.ts";
import { renderPromptTemplate } from "./prompt_template.ts";
import type { ResolvedAgentSpec } from "./spec.ts";
import { listWorkDir } from "./work_dir_listing.ts";
import type { ControlPath } from "../tooling/control_paths.ts";
import { findGitBash, processGitBashSearch } from "../process/shell_info.ts";

export { PromptTemplateError } from "./prompt_template.ts";

/** The built-in prompt variables, computed once per run. */
export interface BuiltinPromptArgs extends Record<string, string> {
  /** Local start time, ISO 8601 with UTC offset. */
  KIMI_NOW: string;
  /** Absolute work dir. */
  KIMI_WORK_DIR: string;
  /** Two-level tree of the work dir. */
  KIMI_WORK_DIR_LS: string;
  /** Merged AGENTS.md files ("" when none). */
  KIMI_AGENTS_MD: string;
  /** Skills listing (`No skills found.` when none). */
  KIMI_SKILLS: string;
  /** One section per additional directory, or "". */
  KIMI_ADDITIONAL_DIRS_INFO: string;
  /** `macOS`, `Windows`, `Linux` or another OS name. */
  KIMI_OS: string;
  /** Shell used by the Shell tool, e.g. ``bash (`/bin/bash`)``. */
  KIMI_SHELL: string;
  /** What this run cannot do or is not protected by (sandbox, permissions). */
  KIMI_CAPABILITY_NOTES: string;
}

/** Options of {@link builtinPromptArgs}. */
export interface BuiltinPromptArgsOptions {
  /** Work dir (made absolute). */
  workDir: string;
  /** Additional workspace directories (`--add-dir`, `/add-dir`). */
  additionalDirs: string[];
  /** Rendered skills listing (see `formatSkillsListing`); "" means none. */
  skillsText: string;
  /** Statement of the run's capabilities; defaults to {@link DEFAULT_CAPABILITY_NOTES}. */
  capabilityNotes?: string;
  /** Start time; defaults to now. */
  now?: Date;
  /** OS name (`Deno.build.os` style or already display-ready); defaults to the host's. */
  os?: string;
  /** Shell path; defaults to the detected shell ({@link detectShellPath}). */
  shellPath?: string;
  /** The session's control paths: an AGENTS.md leading to a secret one is not inlined. */
  controls?: readonly ControlPath[];
}

/** The capability statement used when the caller gives none: no sandbox. */
export const DEFAULT_CAPABILITY_NOTES =
  "You are not in a sandbox: every command and file change takes effect on the user's real " +
  "system immediately, so be careful. Do not read, write or run anything outside the working " +
  "directory (and any additional directories) unless the user asks you to.";

function pad(n: number, width = 2): string {
  return String(Math.trunc(n)).padStart(width, "0");
}

/**
 * Python-style `datetime.isoformat()` of `date` in a fixed UTC offset (minutes east of UTC;
 * defaults to the host's local offset at that instant): `2025-01-02T03:04:05.678000+08:00`,
 * without the fraction when the milliseconds are zero.
 */
export function formatLocalIsoTime(date: Date, offsetMinutes?: number): string {
  const offset = offsetMinutes ?? -date.getTimezoneOffset();
  const local = new Date(date.getTime() + offset * 60_000);
  const ms = local.getUTCMilliseconds();
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  return `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${
    pad(local.getUTCDate())
  }T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${
    ms === 0 ? "" : `.${pad(ms, 3)}000`
  }${sign}${pad(abs / 60)}:${pad(abs % 60)}`;
}

/** Display name of an OS: `darwin` → `macOS`, `windows` → `Windows`, `linux` → `Linux`. */
export function osDisplayName(os: string): string {
  const names: Record<string, string> = {
    darwin: "macOS",
    windows: "Windows",
    linux: "Linux",
    freebsd: "FreeBSD",
    netbsd: "NetBSD",
    openbsd: "OpenBSD",
    android: "Android",
    solaris: "Solaris",
    illumos: "illumos",
    aix: "AIX",
  };
  return names[os.toLowerCase()] ?? os;
}

function envVar(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The shell the Shell tool runs: on Windows Git Bash when found ({@link findGitBash}, else
 * `bash.exe`); elsewhere
 * `$SHELL`, `/bin/bash`, `/usr/bin/bash`, `/usr/local/bin/bash`, whichever is a file first,
 * else `/bin/sh`.
 */
export async function detectShellPath(os: string = Deno.build.os): Promise<string> {
  if (os === "windows") {
    const found = findGitBash(processGitBashSearch());
    return "path" in found ? found.path : "bash.exe";
  }
  const candidates = [envVar("SHELL"), "/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"];
  for (const c of candidates) if (c && (await pathStatus(c)) === "file") return c;
  return "/bin/sh";
}

/** ``<name> (`<path>`)`` for a shell path, the name being the file name without `.exe`. */
export function describeShell(shellPath: string): string {
  const name = basename(shellPath.replace(/[\\/]+$/, "").replace(/\\/g, "/"))
    .replace(/\.exe$/i, "") || "sh";
  return `${name} (\`${shellPath}\`)`;
}

/** `${KIMI_ADDITIONAL_DIRS_INFO}`: one ``### `<dir>` `` section with its tree per dir. */
export async function formatAdditionalDirsInfo(dirs: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const dir of dirs) {
    const abs = resolve(dir);
    parts.push(`### \`${abs}\`\n\n\`\`\`\n${await listWorkDir(abs)}\n\`\`\``);
  }
  return parts.join("\n\n");
}

/** Compute the built-in prompt variables for a run. */
export async function builtinPromptArgs(
  opts: BuiltinPromptArgsOptions,
): Promise<BuiltinPromptArgs> {
  const workDir = resolve(opts.workDir);
  const os = opts.os ?? Deno.build.os;
  const shellPath = opts.shellPath ?? await detectShellPath(os);
  const [ls, agentsMd, additional] = await Promise.all([
    listWorkDir(workDir),
    loadAgentsMd(workDir, opts.controls),
    formatAdditionalDirsInfo(opts.additionalDirs),
  ]);
  return {
    KIMI_NOW: formatLocalIsoTime(opts.now ?? new Date()),
    KIMI_WORK_DIR: workDir,
    KIMI_WORK_DIR_LS: ls,
    KIMI_AGENTS_MD: agentsMd,
    KIMI_SKILLS: opts.skillsText || "No skills found.",
    KIMI_ADDITIONAL_DIRS_INFO: additional,
    KIMI_OS: osDisplayName(os),
    KIMI_SHELL: describeShell(shellPath),
    KIMI_CAPABILITY_NOTES: opts.capabilityNotes ?? DEFAULT_CAPABILITY_NOTES,
  };
}

/**
 * Render `spec`'s system prompt. Variables are the built-ins plus the spec's
 * `system_prompt_args` (a spec arg with a built-in's name takes precedence, as in the
 * reference's `render(builtins, **args)`).
 *
 * @throws {PromptTemplateError} `Missing system prompt arg in <path>: <NAME>` for an unknown
 * variable, or a malformed `{% %}` tag.
 */
export function renderSystemPrompt(
  spec: ResolvedAgentSpec,
  builtins: Readonly<Record<string, string>>,
): string {
  return renderPromptTemplate(
    spec.systemPrompt.template,
    { ...builtins, ...spec.systemPromptArgs },
    spec.systemPrompt.source,
  );
}
