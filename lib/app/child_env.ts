/**
 * The environment handed to child processes (shell commands, background tasks, MCP servers):
 * the user's ordinary variables without the agent's secrets.
 *
 * @module
 */

/** Variables that hold the agent's own credentials. */
const SECRET_NAMES = new Set([
  "KIMI_API_KEY",
  "OPENAI_API_KEY",
  "OPENAI_ADMIN_KEY",
  "ANTHROPIC_API_KEY",
  "GEMINI_API_KEY",
  "VERTEXAI_API_KEY",
  "KIMI_CODE_API_KEY",
]);

/**
 * Copy `base` without the agent's secrets: well-known key variables, variables a provider's
 * `env` sets, and any variable whose value equals a configured secret.
 */
export function childEnvironment(
  base: Readonly<Record<string, string>>,
  secrets: { values: readonly string[]; names?: readonly string[] },
): Record<string, string> {
  const values = new Set(secrets.values.filter((v) => v.length >= 8));
  const names = new Set([...SECRET_NAMES, ...(secrets.names ?? [])]);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (names.has(k) || values.has(v)) continue;
    out[k] = v;
  }
  return out;
}

/** The process environment as far as this run may read it (empty when env is denied). */
export function readableEnvironment(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}
