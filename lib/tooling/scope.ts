/**
 * The permission scope: what Deno lets this run touch. It is the hard floor beneath approvals.
 *
 * @module
 */

/** Kinds of access a tool may need. */
export type AccessKind = "read" | "write" | "net" | "run" | "env";

/** The result of a scope check. */
export type ScopeDecision = { allowed: true } | { allowed: false; message: string };

/** What this run may touch. */
export interface PermissionScope {
  /**
   * Check one access. `target` is an absolute path (read/write), `host[:port]` (net), a program
   * name or path (run) or a variable (env). Never prompts.
   */
  check(kind: AccessKind, target?: string): ScopeDecision;
}

/** The flag that would grant an access, e.g. `--allow-write=/etc/hosts`. */
export function grantingFlag(kind: AccessKind, target?: string): string {
  return target ? `--allow-${kind}=${target}` : `--allow-${kind}`;
}

/** The verb used in denial messages. */
function verb(kind: AccessKind): string {
  switch (kind) {
    case "read":
      return "read";
    case "write":
      return "write";
    case "net":
      return "connect to";
    case "run":
      return "run";
    case "env":
      return "read the environment variable";
  }
}

/** The denial message for an access outside the scope. */
export function denialMessage(kind: AccessKind, target?: string): string {
  const what = target ? ` \`${target}\`` : "";
  return `Denied by the sandbox: this run may not ${verb(kind)}${what} (needs ${
    grantingFlag(kind, target)
  }).`;
}

/** A scope backed by `Deno.permissions.querySync`; `prompt` counts as not granted. */
export class DenoPermissionScope implements PermissionScope {
  /** Check one access against Deno's permission state. */
  check(kind: AccessKind, target?: string): ScopeDecision {
    let desc: Deno.PermissionDescriptor;
    switch (kind) {
      case "read":
      case "write":
        desc = { name: kind, path: target };
        break;
      case "net":
        desc = { name: "net", host: target };
        break;
      case "run":
        desc = { name: "run", command: target };
        break;
      case "env":
        desc = { name: "env", variable: target };
        break;
    }
    const state = Deno.permissions.querySync(desc).state;
    return state === "granted"
      ? { allowed: true }
      : { allowed: false, message: denialMessage(kind, target) };
  }
}

/**
 * Whether the run has every permission without a target (`-A`, `deno task full`): the only
 * kind of run where the agent may change kimi's control files (after an explicit approval).
 */
export function isFullAccess(scope: PermissionScope): boolean {
  const kinds: AccessKind[] = ["read", "write", "net", "run", "env"];
  return kinds.every((k) => scope.check(k).allowed);
}

/** A scope that allows everything (tests and `-A` runs). */
export const FULL_SCOPE: PermissionScope = { check: () => ({ allowed: true }) };
