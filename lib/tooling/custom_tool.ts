/**
 * Custom tools written as TypeScript modules. An agent spec's `tools` entry that is a `.ts`
 * path (resolved against the spec file) or an `https://` URL is loaded with a dynamic
 * `import()` under this run's Deno permissions.
 *
 * The module must have a named export `tool` that is a {@link ToolFactory} (default exports
 * are not used). The tool follows the one contract of every tool: `resolve(params)` checks
 * what the call names and returns what it touches, its approval and its `execute` (or the
 * result to return at once); the toolset then runs approval, hooks, undo and execution in its
 * fixed order:
 *
 * ```ts
 * import * as z from "zod"; // or "npm:zod@^4"
 * import type { ToolFactory } from "<kimi>/lib/tooling/tool.ts";
 *
 * export const tool: ToolFactory = (env) => ({
 *   name: "Shout",
 *   description: "Upper-case a text.",
 *   parameters: z.object({ text: z.string() }),
 *   resolve: ({ text }) => ({
 *     execute: async () => ({
 *       is_error: false, output: text.toUpperCase(), message: "", display: [],
 *     }),
 *   }),
 * });
 * ```
 *
 * The older call-style form ({@link CallStyleTool}: `call(params, ctx)` doing everything, asking
 * with `ctx.requestApproval` itself) is accepted too and adapted at load.
 *
 * The factory may return `null` to leave the tool out of this run.
 *
 * @module
 */
import { pathToFileURL } from "node:url";
import { denialMessage, type PermissionScope } from "./scope.ts";
import type { Tool, ToolEnv } from "./tool.ts";
import { type CallStyleTool, fromCallStyle } from "./call_style_tool.ts";

/** A custom tool module that cannot be used; the message names the module and the cause. */
export class CustomToolError extends Error {
  /** The module reference as written in the spec (absolute path or URL). */
  readonly module: string;
  /** Create the error. */
  constructor(module: string, cause: string) {
    super(`Cannot load custom tool module ${module}: ${cause}`);
    this.name = "CustomToolError";
    this.module = module;
  }
}

/** Whether a (normalised) spec tool entry refers to a custom module rather than a built-in. */
export function isCustomToolModule(ref: string): boolean {
  return /^https?:\/\//i.test(ref) || /^file:\/\//i.test(ref) || ref.startsWith("/") ||
    /\.(?:ts|mts|js|mjs)$/.test(ref);
}

function moduleUrl(ref: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref)) return ref;
  return pathToFileURL(ref).href;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message.replace(/\s+/g, " ").trim();
  return String(err);
}

/** The access a Deno permission error names (`Requires write access to "/x"`), if any. */
function deniedAccess(
  err: unknown,
): { kind: "read" | "write" | "net" | "run" | "env" | "import"; target?: string } | null {
  const m = /Requires (read|write|net|run|env|import) access(?: to "([^"]*)")?/.exec(
    err instanceof Error ? err.message : String(err),
  );
  if (!m) return null;
  return { kind: m[1] as "read", target: m[2] || undefined };
}

function isPermissionError(err: unknown): boolean {
  return err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied ||
    (err instanceof Error && /NotCapable|Requires (?:read|import|net) access/i.test(err.message));
}

function checkTool(ref: string, value: unknown): Tool {
  const t = value as Partial<Tool & CallStyleTool> | null;
  if (!t || typeof t !== "object") {
    throw new CustomToolError(ref, "the `tool` factory must return a tool object or null");
  }
  if (typeof t.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(t.name)) {
    throw new CustomToolError(
      ref,
      "the tool's `name` must be 1-64 letters, digits, `_` or `-`",
    );
  }
  if (typeof t.description !== "string") {
    throw new CustomToolError(ref, `tool ${t.name}: \`description\` must be a string`);
  }
  const params = t.parameters as { safeParse?: unknown } | undefined;
  if (!params || typeof params.safeParse !== "function") {
    throw new CustomToolError(ref, `tool ${t.name}: \`parameters\` must be a zod schema`);
  }
  if (typeof t.resolve === "function") return t as Tool;
  if (typeof t.call !== "function") {
    throw new CustomToolError(ref, `tool ${t.name}: \`call\` must be a function`);
  }
  return fromCallStyle(t as CallStyleTool);
}

/**
 * Import a custom tool module and build its tool for `env`. Returns null when the factory
 * leaves the tool out.
 *
 * @throws {CustomToolError} when the module cannot be read or imported (missing permission
 * included), has no `tool` export, or the factory fails or returns something that is not a tool.
 */
export async function loadCustomTool(
  ref: string,
  env: ToolEnv,
  opts: { scope?: PermissionScope } = {},
): Promise<Tool | null> {
  const url = moduleUrl(ref);
  if (url.startsWith("file:") && opts.scope) {
    const path = ref.startsWith("file:") ? new URL(ref).pathname : ref;
    const d = opts.scope.check("read", path);
    if (!d.allowed) throw new CustomToolError(ref, d.message);
  }
  let mod: Record<string, unknown>;
  try {
    mod = await import(url);
  } catch (err) {
    if (isPermissionError(err)) {
      // The module itself may do the denied operation at import time (e.g. write a file):
      // name what Deno denied, not a guess.
      const denied = deniedAccess(err);
      const ownRead = denied?.kind === "read" && url === moduleUrl(denied.target ?? "");
      if (denied && denied.kind !== "import" && !ownRead) {
        throw new CustomToolError(
          ref,
          `the module needs access this run does not have (${describe(err)}). ${
            denialMessage(denied.kind, denied.target)
          }`,
        );
      }
      const kind = url.startsWith("file:") ? "read" : "net";
      throw new CustomToolError(
        ref,
        `this run is not allowed to import it (${describe(err)}). ${
          kind === "read" ? denialMessage("read", ref) : "Allow the import with --allow-import."
        }`,
      );
    }
    throw new CustomToolError(ref, describe(err));
  }
  const factory = mod.tool;
  if (typeof factory !== "function") {
    throw new CustomToolError(
      ref,
      "the module has no `tool` export; export the tool factory as `export const tool = (env) => ({...})`",
    );
  }
  let built: unknown;
  try {
    built = await factory(env);
  } catch (err) {
    if (err instanceof CustomToolError) throw err;
    throw new CustomToolError(ref, `the \`tool\` factory threw: ${describe(err)}`);
  }
  if (built === null) return null;
  return checkTool(ref, built);
}
