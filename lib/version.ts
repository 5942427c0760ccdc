/**
 * Version constants shared by every layer.
 *
 * @module
 */

/** The CLI version this program reports (`kimi --version`, `kimi info`, wire `initialize`). */
export const VERSION = "1.49.0";

/**
 * The wire protocol version of `wire.jsonl` records (their format has not changed since 1.10).
 */
export const WIRE_PROTOCOL_VERSION = "1.10";

/**
 * The wire protocol version spoken by `kimi --wire` (`initialize`, `kimi info`): 1.11 adds the
 * approval rule choices (`ApprovalRequest.grant_patterns`/`rule_file`/`options` and the
 * `approve_always` answer), 1.12 the goal and swarm events (`GoalUpdate`,
 * `SwarmUpdate`). `Notification` events for finished background tasks reach clients from 1.10
 * on, as the reference sends them.
 * Clients declaring an older version get the messages of their version.
 */
export const WIRE_SERVER_PROTOCOL_VERSION = "1.12";

/** Agent spec versions accepted by the YAML loader. */
export const AGENT_SPEC_VERSIONS: readonly string[] = ["1"];

/** Display name of the server in wire `initialize` and ACP. */
export const SERVER_NAME = "Kimi Code CLI";
