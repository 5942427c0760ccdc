/**
 * Creating the MCP manager only when servers are configured, so runs without MCP never load
 * the SDK.
 *
 * @module
 */
import type { McpManager, McpManagerOptions } from "./manager.ts";

/** The manager for `opts.servers`, or null when none is configured. Not started yet. */
export async function createMcpManager(opts: McpManagerOptions): Promise<McpManager | null> {
  if (Object.keys(opts.servers).length === 0) return null;
  const { McpManager } = await import("./manager.ts");
  return new McpManager(opts);
}
