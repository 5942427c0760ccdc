/**
 * Shell confinement with bubblewrap: deciding from the run's permission scope whether shell
 * commands must be confined ({@link planConfinement}), building the `bwrap` command line
 * ({@link bwrapArgv}) and the session's command wrapper that applies it
 * ({@link confinementWrapper}).
 *
 * Inside the sandbox the file system is read-only except the paths the run may write, `/tmp`
 * is a private tmpfs, the network is unshared unless the run may connect anywhere, commands
 * live in their own pid namespace with a fresh `/proc` (so no `/proc/<agent pid>/environ`),
 * kimi's control paths (config, `mcp.json`, credentials, OAuth tokens, the `--config-file` in
 * use, ...) are masked or read-only, and with the network off the host's sockets (`/run`,
 * `/var/run`, the ssh agent) are out of reach. Variables naming host agents (`SSH_AUTH_SOCK`,
 * D-Bus, docker, X11) are not passed in.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { isPermissionError, pathStatusSync } from "../fs/exists.ts";
import { type CommandWrapper, PASSTHROUGH_WRAPPER } from "../process/command_wrapper.ts";
import { type ControlPath, controlPaths } from "../tooling/control_paths.ts";
import type { PermissionScope } from "../tooling/scope.ts";
import { capDropArgs } from "./bwrap.ts";

/** Inputs of {@link planConfinement}. */
export interface PlanInputs {
  /** Absolute working directory. */
  readonly workDir: string;
  /** Extra workspace directories (absolute). */
  readonly additionalDirs: readonly string[];
  /** Share dir (`~/.kimi`). */
  readonly shareDir: string;
  /** What this run may touch. */
  readonly scope: PermissionScope;
}

/** Whether and how shell commands are confined. */
export interface ConfinementPlan {
  /** Whether the scope is narrower than everything, so commands must run in a sandbox. */
  readonly confined: boolean;
  /** Why (or why not), in a few words. */
  readonly reason: string;
  /** Paths bound writable inside the sandbox (`["/"]` when the run may write anywhere). */
  readonly writable: readonly string[];
  /**
   * Workspace directories (work dir and additional dirs) that stay visible even when they lie
   * under `/tmp` (which is replaced by a private tmpfs); read-only unless also writable.
   */
  readonly readable: readonly string[];
  /** Whether commands keep the network. */
  readonly network: boolean;
  /** Short human description, e.g. `sandboxed: writes only to /w and a private /tmp; network off`. */
  readonly description: string;
}

/**
 * Environment variables that point commands at host agents and sockets (ssh agent, D-Bus,
 * docker, X11/Wayland, GnuPG, Kerberos); confined commands do not get them.
 */
export const SOCKET_ENV_VARS: readonly string[] = [
  "SSH_AUTH_SOCK",
  "SSH_AGENT_PID",
  "GPG_AGENT_INFO",
  "DBUS_SESSION_BUS_ADDRESS",
  "DBUS_SYSTEM_BUS_ADDRESS",
  "DOCKER_HOST",
  "DISPLAY",
  "WAYLAND_DISPLAY",
  "XAUTHORITY",
  "KRB5CCNAME",
];

/**
 * Directories holding host Unix sockets (`/run`, `/var/run`: D-Bus, docker.sock, the user's
 * runtime dir with its agents), replaced by an empty tmpfs when the network is off. `/tmp`
 * (`/tmp/.X11-unix`, ssh agent sockets) is always private.
 */
export const SOCKET_DIRS: readonly string[] = ["/run", "/var/run"];

/**
 * Host sockets that hand out control of the machine or the user's session (docker, containerd,
 * podman, the D-Bus system bus, snapd) and the per-user runtime dirs (`/run/user/<uid>`: session
 * bus, ssh and gpg agents, podman), hidden even when the network stays on (`/run` itself stays
 * visible then: it holds the DNS configuration).
 */
export const CONTROL_SOCKETS: readonly string[] = [
  "/run/docker.sock",
  "/run/containerd/containerd.sock",
  "/run/podman/podman.sock",
  "/run/dbus/system_bus_socket",
  "/run/snapd.socket",
];
/** See {@link CONTROL_SOCKETS}: directories replaced by an empty tmpfs. */
export const CONTROL_SOCKET_DIRS: readonly string[] = ["/run/user"];

function kindOf(path: string): "file" | "dir" | null {
  const status = pathStatusSync(path);
  return status === "directory"
    ? "dir"
    : status === "missing" || status === "denied"
    ? null
    : "file";
}

function isWithin(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

function describe(writable: readonly string[], network: boolean): string {
  const writes = writable.includes("/")
    ? "writes anywhere but a private /tmp"
    : writable.length > 0
    ? `writes only to ${writable.join(", ")} and a private /tmp`
    : "writes only to a private /tmp";
  return `sandboxed: ${writes}; network ${network ? "on" : "off"}`;
}

/**
 * Decide how shell commands run under `scope`. Confinement is needed when the run may not
 * write everywhere or may not connect everywhere. Writable inside the sandbox are the work dir
 * and additional dirs that exist and that the scope lets the run write (or `/` when it may
 * write anywhere). The network stays on only when the run may connect anywhere: bubblewrap
 * cannot restrict commands to some hosts, so a host-limited `--allow-net` means no network.
 */
export function planConfinement(inputs: PlanInputs): ConfinementPlan {
  const { scope } = inputs;
  const writeAll = scope.check("write").allowed;
  const network = scope.check("net").allowed;
  if (writeAll && network) {
    return {
      confined: false,
      reason: "the run may write anywhere and use the network",
      writable: ["/"],
      readable: [],
      network: true,
      description: "not sandboxed",
    };
  }
  const readable: string[] = [];
  for (const dir of [inputs.workDir, ...inputs.additionalDirs]) {
    if (dir.startsWith("/") && !readable.includes(dir) && pathStatusSync(dir) === "directory") {
      readable.push(dir);
    }
  }
  const writable = writeAll ? ["/"] : readable.filter((d) => scope.check("write", d).allowed);
  const limits = [
    ...(writeAll ? [] : ["write access is limited"]),
    ...(network ? [] : ["network access is limited"]),
  ];
  return {
    confined: true,
    reason: limits.join(" and "),
    writable,
    readable,
    network,
    description: describe(writable, network),
  };
}

/** Options of {@link bwrapArgv}. */
export interface BwrapArgvOptions {
  /** Working directory of the command (inside the sandbox). */
  readonly cwd: string;
  /** Share dir whose control paths are masked. */
  readonly shareDir: string;
  /** The bwrap program (default `bwrap`). */
  readonly bwrap?: string;
  /** The command's environment (socket paths named in it are hidden when the network is off). */
  readonly env?: Readonly<Record<string, string>>;
  /** Control paths to protect (default: the share dir's, {@link controlPaths}). */
  readonly controlPaths?: readonly ControlPath[];
  /** The host's bound Unix sockets (default: {@link listeningUnixSockets}). */
  readonly hostSockets?: () => readonly string[];
}

function realPathOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/**
 * The real directory of a socket dir, `null` when it does not exist. When this run may not
 * look (no read permission on it), `/run` is assumed to exist (it does on every Linux system
 * bwrap runs on); others are skipped.
 */
function realDir(path: string): string | null {
  try {
    const real = Deno.realPathSync(path);
    return Deno.statSync(real).isDirectory ? real : null;
  } catch (e) {
    return isPermissionError(e) && path === "/run" ? path : null;
  }
}

/**
 * The argument vector running `argv` confined by `plan`:
 * `bwrap --die-with-parent --unshare-pid --cap-drop <cap>... [--unshare-net]
 * --unsetenv <socket vars>...
 * --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp [--tmpfs /run] --bind <w> <w>...
 * [--ro-bind <r> <r>...] <control path masks> --chdir <cwd> -- argv...`.
 *
 * The fresh `/proc` of the new pid namespace shows only the sandbox's processes, so no
 * `/proc/<kimi pid>/environ`. Control paths are masked where visible: secret files are
 * replaced by `/dev/null` and secret directories by an empty tmpfs; the others (share dir,
 * skills, agent files) are bound read-only when they lie in a writable place. With the network
 * off, `/run` and `/var/run` are empty; with it on, the sockets that control the host or the
 * session ({@link CONTROL_SOCKETS}, `/run/user`) are hidden. A socket named by `SSH_AUTH_SOCK`
 * is masked either way.
 */
export function bwrapArgv(
  plan: ConfinementPlan,
  argv: readonly string[],
  opts: BwrapArgvOptions,
): string[] {
  const out = [opts.bwrap ?? "bwrap", "--die-with-parent", "--unshare-pid", ...capDropArgs()];
  if (!plan.network) out.push("--unshare-net");
  for (const name of SOCKET_ENV_VARS) out.push("--unsetenv", name);
  const writeAll = plan.writable.includes("/");
  out.push(writeAll ? "--bind" : "--ro-bind", "/", "/");
  out.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  const hiddenRoots = ["/tmp"];
  if (!plan.network) {
    for (const dir of SOCKET_DIRS) {
      const real = realDir(dir);
      if (real === null || hiddenRoots.includes(real)) continue;
      out.push("--tmpfs", real);
      hiddenRoots.push(real);
    }
  }
  const bound: string[] = [];
  // Under a hidden root (the private /tmp, /run) only what is bound back is visible.
  const visible = (p: string) =>
    !hiddenRoots.some((h) => isWithin(p, h)) || bound.some((b) => isWithin(p, b));
  const rebind = (r: string, writable: boolean) => {
    out.push(writable ? "--bind" : "--ro-bind", r, r);
    bound.push(r);
  };
  if (!writeAll) {
    for (const w of plan.writable) if (pathStatusSync(w) === "directory") rebind(w, true);
  }
  for (const r of [...plan.readable, opts.cwd]) {
    if (visible(r) || pathStatusSync(r) !== "directory") continue;
    rebind(r, writeAll);
  }
  const writableAt = (p: string) =>
    writeAll ? visible(p) : plan.writable.some((w) => bound.includes(w) && isWithin(p, w));
  // Parents before children, so a masked file inside a read-only share dir stays masked.
  // Masks go on real paths (a share dir reached through a symlink is masked where it is).
  const all = [...(opts.controlPaths ?? controlPaths(opts.shareDir))];
  const controls = all
    .map((c) => ({ ...c, path: realPathOrNull(c.path) }))
    .filter((c): c is ControlPath => c.path !== null)
    .sort((a, b) => a.path.length - b.path.length);
  for (const c of controls) {
    // Hiding an entry that is not visible would only create empty mount points.
    const kind = kindOf(c.path);
    if (kind === null || !visible(c.path)) continue;
    if (c.secret) {
      // `--dev-bind`: a plain bind of /dev/null would be `nodev` and unreadable. Reads give
      // nothing, writes vanish; the real file is untouched either way.
      if (kind === "dir") out.push("--tmpfs", c.path);
      else out.push("--dev-bind", "/dev/null", c.path);
    } else if (writableAt(c.path)) {
      out.push("--ro-bind", c.path, c.path);
    }
  }
  // A control file whose folder is guarded (a project's `.kimi/config.toml`) can be neither
  // replaced by renaming its folder nor created when missing: the folder is mounted read-only,
  // or, when it is missing too, an empty read-only folder takes its place (bwrap leaves that
  // empty folder behind as its mount point). A writable root itself (the work dir) is not
  // frozen whole: there the file's own read-only mount is what protects it.
  const frozen = new Set<string>();
  for (const c of all) {
    if (c.kind !== "file" || !c.guardFolder) continue;
    const parent = dirname(c.path);
    const realParent = realPathOrNull(parent);
    if (realParent !== null) {
      if (
        kindOf(realParent) !== "dir" || frozen.has(realParent) || !visible(realParent) ||
        !writableAt(realParent) || plan.writable.includes(realParent) || realParent === opts.cwd
      ) continue;
      out.push("--ro-bind", realParent, realParent);
      frozen.add(realParent);
      continue;
    }
    const grand = realPathOrNull(dirname(parent));
    if (grand === null || kindOf(grand) !== "dir" || !visible(grand) || !writableAt(grand)) {
      continue;
    }
    const target = join(grand, basename(parent));
    if (frozen.has(target)) continue;
    out.push("--tmpfs", target, "--remount-ro", target);
    frozen.add(target);
  }
  if (plan.network) {
    // /run stays (DNS), but not the sockets that control the host or the user's session.
    for (const dir of CONTROL_SOCKET_DIRS) {
      if (kindOf(dir) === "dir" && visible(dir)) out.push("--tmpfs", dir);
    }
    for (const sock of CONTROL_SOCKETS) {
      const real = realPathOrNull(sock);
      if (real !== null && kindOf(real) === "file" && visible(real)) {
        out.push("--dev-bind", "/dev/null", real);
      }
    }
  }
  // The agent socket the user's environment names, wherever it lies.
  const sock = opts.env?.SSH_AUTH_SOCK;
  const agent = sock?.startsWith("/") ? realPathOrNull(sock) : null;
  if (agent !== null && kindOf(agent) === "file" && visible(agent)) {
    out.push("--dev-bind", "/dev/null", agent);
  }
  if (!plan.network) {
    // Every host service listening on a Unix socket outside the work dir (a rootless docker
    // in the home dir, a gpg or ssh agent, an X server, a database): unreachable without the
    // network, wherever its socket lies. The project's own sockets stay usable.
    const masked = new Set<string>();
    for (const sock of (opts.hostSockets ?? listeningUnixSockets)()) {
      const real = realPathOrNull(sock);
      if (real === null || masked.has(real) || masked.size >= MAX_MASKED_SOCKETS) continue;
      if (isWithin(real, opts.cwd) || plan.writable.some((w) => w !== "/" && isWithin(real, w))) {
        continue;
      }
      if (kindOf(real) !== "file" || !visible(real)) continue;
      out.push("--dev-bind", "/dev/null", real);
      masked.add(real);
    }
  }
  out.push("--chdir", opts.cwd, "--", ...argv);
  return out;
}

/** At most this many host sockets are masked one by one (the rest lie under hidden dirs). */
const MAX_MASKED_SOCKETS = 512;

/**
 * The paths of the Unix sockets bound in this network namespace (`/proc/net/unix`; abstract
 * ones are left out: a sandbox without the network has its own). Empty when it cannot be read.
 */
export function listeningUnixSockets(): string[] {
  let text: string;
  try {
    text = Deno.readTextFileSync("/proc/net/unix");
  } catch {
    return [];
  }
  const out = new Set<string>();
  for (const line of text.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const path = fields.slice(7).join(" ");
    if (path.startsWith("/")) out.add(path);
  }
  return [...out];
}

/** Options of {@link confinementWrapper}. */
export interface InstallOptions {
  /** Absolute path of bwrap. */
  readonly bwrap: string;
  /** Share dir whose config and credentials are hidden. */
  readonly shareDir: string;
  /**
   * Re-plans before each command (e.g. because `/add-dir` added a writable directory);
   * the given plan is used when omitted.
   */
  readonly replan?: () => ConfinementPlan;
  /**
   * The session's control paths, read before each command (default: the share dir's).
   */
  readonly controlPaths?: () => readonly ControlPath[];
}

/**
 * The command wrapper that runs every Shell and background-task command of one session under
 * bwrap as `plan` says (a plan that is not confined gives the passthrough).
 */
export function confinementWrapper(plan: ConfinementPlan, opts: InstallOptions): CommandWrapper {
  if (!plan.confined) return PASSTHROUGH_WRAPPER;
  return (argv, wrap) => {
    const current = opts.replan?.() ?? plan;
    const reveal = wrap.reveal ?? [];
    return bwrapArgv(current, argv, {
      cwd: wrap.cwd,
      shareDir: opts.shareDir,
      bwrap: opts.bwrap,
      env: wrap.env,
      controlPaths: reveal.length === 0
        ? opts.controlPaths?.()
        : (opts.controlPaths?.() ?? controlPaths(opts.shareDir)).filter((c) =>
          !reveal.includes(c.path)
        ),
    });
  };
}
