/**
 * Version constants shared by every layer.
 *
 * @module
 */

/** The CLI version this program reports (`kimi --version`, `kimi info`, wire `initialize`). */
export const VERSION = "1.49.0";

/** The wire protocol version spoken by `kimi --wire` and written to `wire.jsonl`. */
export const WIRE_PROTOCOL_VERSION = "1.10";

/** Agent spec versions accepted by the YAML loader. */
export const AGENT_SPEC_VERSIONS: readonly string[] = ["1"];

/** Display name of the server in wire `initialize` and ACP. */
export const SERVER_NAME = "Kimi Code CLI";
