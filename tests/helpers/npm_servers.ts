/**
 * The npm packages the tests start as child processes (real MCP servers). They are not part of
 * any test's module graph, so `scripts/test.ts` caches them before the suite starts: with an
 * empty Deno cache a first download would otherwise race the tests' timeouts.
 *
 * @module
 */

/** `@modelcontextprotocol/server-everything`, the reference stdio server. */
export const MCP_SERVER_EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";

/** `@modelcontextprotocol/server-filesystem`. */
export const MCP_SERVER_FILESYSTEM = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";

/** Every npm package a test spawns (run with `--no-config --no-lock`). */
export const SPAWNED_NPM_PACKAGES: readonly string[] = [
  MCP_SERVER_EVERYTHING,
  MCP_SERVER_FILESYSTEM,
];
