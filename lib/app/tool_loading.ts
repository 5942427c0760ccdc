/**
 * Loading an agent's tools from its effective tool list: built-in names through
 * `tools/registry.ts`, custom TypeScript modules (paths/URLs) through a dynamic import.
 *
 * @module
 */
import { CustomToolError, isCustomToolModule, loadCustomTool } from "../tooling/custom_tool.ts";
import type { PermissionScope } from "../tooling/scope.ts";
import type { Tool, ToolEnv } from "../tooling/tool.ts";
import { BUILTIN_TOOLS } from "../../tools/registry.ts";

/** Options of {@link loadAgentTools}. */
export interface LoadAgentToolsOptions {
  /** Built-in tools this run cannot offer (sandbox); silently left out. */
  disabled?: ReadonlySet<string>;
  /** Permission scope checked before importing custom modules. */
  scope?: PermissionScope;
}

/**
 * Start loading the modules of the built-in tools among `names` without waiting (start-up
 * overlaps their loading with other work); {@link loadAgentTools} later gets the same modules.
 */
export function prefetchBuiltinTools(names: readonly string[]): void {
  for (const name of names) {
    if (Object.hasOwn(BUILTIN_TOOLS, name)) BUILTIN_TOOLS[name]().catch(() => {});
  }
}

/**
 * Build the tools named by `names` for `env`, in order. Unknown built-in names are skipped;
 * factories returning null are left out.
 *
 * @throws {CustomToolError} when a custom module cannot be loaded, or its tool's name clashes
 * with an earlier tool.
 */
export async function loadAgentTools(
  names: readonly string[],
  env: ToolEnv,
  opts: LoadAgentToolsOptions = {},
): Promise<Tool[]> {
  const out: Tool[] = [];
  const seen = new Set<string>();
  // Import every built-in tool module at once (their loading overlaps); build them in order.
  const factories = new Map(
    names
      .filter((n) => Object.hasOwn(BUILTIN_TOOLS, n) && !opts.disabled?.has(n))
      .map((n) => [n, BUILTIN_TOOLS[n]()] as const),
  );
  // A failed import rejects when its tool is built, in order; never unhandled before that.
  for (const f of factories.values()) f.catch(() => {});
  for (const name of names) {
    if (Object.hasOwn(BUILTIN_TOOLS, name)) {
      if (opts.disabled?.has(name)) continue;
      const tool = await (await factories.get(name)!)(env);
      if (tool && !seen.has(tool.name)) {
        seen.add(tool.name);
        out.push(tool);
      }
      continue;
    }
    if (!isCustomToolModule(name)) continue;
    const tool = await loadCustomTool(name, env, { scope: opts.scope });
    if (!tool) continue;
    if (seen.has(tool.name)) {
      throw new CustomToolError(
        name,
        `its tool name "${tool.name}" is already used by another tool of this agent`,
      );
    }
    seen.add(tool.name);
    out.push(tool);
  }
  return out;
}
