/**
 * kimi's control paths: the files that hold its secrets or configure code it runs later (the
 * share dir's `config.toml`/`config.json`, `mcp.json`, `credentials/`, `mcp-oauth/`, `web/`
 * (kimi web's token), the `--config-file` and `--mcp-config-file` in use, the agent file,
 * skills and plugins, and the share dir itself with its sessions).
 * One list serves the file tools, Glob, Grep and the shell sandbox's masking.
 *
 * Hooks are configured in the config file, MCP servers in the config and `mcp.json`, so both
 * are covered by those entries.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { resolveRealPath } from "../fs/real_path.ts";

/** One control path. */
export interface ControlPath {
  /** Absolute path (as configured; compared in real-path form too). */
  readonly path: string;
  /** Whether it is a single file or a directory (everything below counts). */
  readonly kind: "file" | "dir";
  /** What it is, for messages and approvals, e.g. `kimi's configuration (API keys, hooks)`. */
  readonly what: string;
  /** Whether it holds secrets: never readable by the agent, masked in the shell sandbox. */
  readonly secret: boolean;
  /** A directory below it that is not a control path (the share dir's `plans/`). */
  readonly exempt?: string;
  /**
   * For a file: the folder holding it is read-only in the shell sandbox too, so the file can be
   * neither replaced by renaming the folder nor created while it is missing (a project's
   * `.kimi/config.toml`).
   */
  readonly guardFolder?: boolean;
}

/**
 * The control paths of a work dir: its `.kimi/config.toml`, whose approval rules a later run
 * loads (created or changed only by the user, never by the agent).
 */
export function projectControlPaths(workDir: string): ControlPath[] {
  return [{
    path: join(resolve(workDir), ".kimi", "config.toml"),
    kind: "file",
    what: "the project's kimi configuration (approval rules a later run loads)",
    secret: false,
    guardFolder: true,
  }];
}

/** Share-dir entries that are control paths, most specific first. */
export const SHARE_CONTROL_ENTRIES: readonly {
  name: string;
  kind: "file" | "dir";
  what: string;
  secret: boolean;
}[] = [
  {
    name: "config.toml",
    kind: "file",
    what: "kimi's configuration (API keys, hooks, MCP servers)",
    secret: true,
  },
  { name: "config.json", kind: "file", what: "kimi's legacy configuration", secret: true },
  { name: "config.json.bak", kind: "file", what: "kimi's legacy configuration", secret: true },
  {
    name: "mcp.json",
    kind: "file",
    what: "kimi's MCP server configuration (commands it runs)",
    secret: true,
  },
  { name: "credentials", kind: "dir", what: "kimi's OAuth credentials", secret: true },
  { name: "mcp-oauth", kind: "dir", what: "kimi's MCP OAuth tokens", secret: true },
  { name: "web", kind: "dir", what: "kimi web's access token", secret: true },
  { name: "skills", kind: "dir", what: "kimi's user skills", secret: false },
  {
    name: "plugins",
    kind: "dir",
    what: "kimi's plugins (tools and skills kimi runs)",
    secret: false,
  },
];

/** The share dir's subdirectory the agent may write (plan files). */
export const SHARE_WRITABLE_ENTRY = "plans";

/**
 * One session's control paths: the share dir's entries, what was registered beyond them under
 * a source name (e.g. `cli`: the `--config-file` and `--mcp-config-file`s in use; `agent`: the
 * agent file, its system prompt, subagent files and custom tool modules; `cache`), and the
 * share dir itself. Each session has its own set.
 */
export class ControlPathSet {
  /** The share dir. */
  readonly shareDir: string;
  readonly #bySource = new Map<string, readonly ControlPath[]>();

  /** A set for a share dir, with the given sources registered. */
  constructor(shareDir: string, sources: Readonly<Record<string, readonly ControlPath[]>> = {}) {
    this.shareDir = resolve(shareDir);
    for (const [source, paths] of Object.entries(sources)) this.register(source, paths);
  }

  /** Register paths under `source`, replacing what that source registered before. */
  register(source: string, paths: readonly ControlPath[]): void {
    this.#bySource.set(
      source,
      paths.filter((p) => p.path.startsWith("/")).map((p) => ({ ...p, path: resolve(p.path) })),
    );
  }

  /** The registered paths (without the share dir's own). */
  registered(): ControlPath[] {
    return [...this.#bySource.values()].flat();
  }

  /** Every control path of the session: share dir entries, the registered ones, the share dir. */
  list(): ControlPath[] {
    return controlPaths(this.shareDir, this.registered());
  }
}

/** The share dir's own control entries (without the share dir itself). */
export function shareControlPaths(shareDir: string): ControlPath[] {
  const share = resolve(shareDir);
  return SHARE_CONTROL_ENTRIES.map((e) => ({
    path: join(share, e.name),
    kind: e.kind,
    what: e.what,
    secret: e.secret,
  }));
}

/**
 * The control paths of a run with this share dir: its entries, `registered` (see
 * {@link ControlPathSet}), itself.
 */
export function controlPaths(
  shareDir: string,
  registered: readonly ControlPath[] = [],
): ControlPath[] {
  const share = resolve(shareDir);
  return [
    ...shareControlPaths(share),
    ...registered,
    {
      path: share,
      kind: "dir",
      what: "kimi's share dir (sessions, logs, state)",
      secret: false,
      exempt: join(share, SHARE_WRITABLE_ENTRY),
    },
  ];
}

/** The forms a control path is compared in: as given and its real path. */
function forms(path: string): string[] {
  const real = resolveRealPath(path);
  return real.ok && real.path !== path ? [path, real.path] : [path];
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/**
 * Whether an entry directly in the real directory `realDir` may fall on one of `list`'s control
 * paths (in any of their forms): `false` means no name in it can, so the entries of that
 * directory need no {@link controlMatcher} call each. Conservative: exemptions are ignored.
 */
export function controlEntryProbe(list: readonly ControlPath[]): (realDir: string) => boolean {
  const all = list.flatMap((cp) => forms(cp.path));
  return (realDir) => {
    const below = realDir.endsWith("/") ? realDir : realDir + "/";
    return all.some((f) => within(realDir, f) || f.startsWith(below));
  };
}

/** Finds the control path a real path falls on (see {@link controlMatcher}). */
export type ControlMatcher = (realPath: string) => ControlPath | null;

/**
 * A matcher over `list` with the real-path forms computed once (for checking many paths). The
 * first match in list order wins, so specific entries come before the share dir; `exempt`
 * subdirectories (the share dir's `plans/`) do not match.
 */
export function controlMatcher(list: readonly ControlPath[]): ControlMatcher {
  const compiled = list.map((cp) => ({
    cp,
    forms: forms(cp.path),
    exempt: cp.exempt ? forms(cp.exempt) : [],
  }));
  return (realPath) => {
    for (const { cp, forms, exempt } of compiled) {
      const hit = forms.some((f) => cp.kind === "dir" ? within(realPath, f) : realPath === f);
      if (hit && !exempt.some((e) => within(realPath, e))) return cp;
    }
    return null;
  };
}

/** The control path a real (resolved) path falls on, or `null`. */
export function matchControlPath(
  realPath: string,
  list: readonly ControlPath[],
): ControlPath | null {
  return controlMatcher(list)(realPath);
}

/** The secret control path a real path falls on (or `null`). */
export function matchSecretControlPath(
  realPath: string,
  list: readonly ControlPath[],
): ControlPath | null {
  return controlMatcher(list.filter((c) => c.secret))(realPath);
}

/** The refusal for a write to a control path outside a full-access run. */
export function controlWriteMessage(realPath: string, cp: ControlPath): string {
  return `\`${realPath}\` is ${cp.what}. The agent may not change it: it holds secrets or ` +
    "configures code kimi runs. Only a full-access run (deno run -A, `deno task full`) may, " +
    "after an explicit approval; otherwise edit it yourself.";
}
