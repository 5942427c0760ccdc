/**
 * The error raised for a configuration problem the user has to fix (bad file, bad text,
 * bad environment override).
 *
 * @module
 */

/**
 * A configuration problem. The message names the cause and, where it helps, the fix; it never
 * contains secret values such as API keys.
 */
export class ConfigError extends Error {
  /** Create a configuration error with a user-facing message. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfigError";
  }
}
