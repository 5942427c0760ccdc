/**
 * Version-aware output: each client gets only the message types and fields its declared
 * wire protocol version knows (history in reference §14). Pure and table driven.
 *
 * A client that never sent `initialize` (or declared an unparsable version) gets everything.
 *
 * @module
 */
import type { Envelope } from "./messages.ts";

/** A protocol version as `[major, minor]`. */
export type ProtocolVersion = readonly [number, number];

/** Parse `"1.10"` into `[1, 10]`; null when it is not `<int>.<int>`. */
export function parseProtocolVersion(text: string | null | undefined): ProtocolVersion | null {
  const m = /^\s*(\d+)\.(\d+)\s*$/.exec(text ?? "");
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/**
 * The protocol version a connection speaks: the lower of the client's and the server's (a
 * client that declares 1.10 reads "1.10"); the server's when the client's does not parse.
 */
export function negotiatedProtocolVersion(
  client: string | null | undefined,
  server: string,
): string {
  const c = parseProtocolVersion(client);
  const s = parseProtocolVersion(server);
  if (c === null || s === null) return server;
  return atLeast(c, s) ? server : `${c[0]}.${c[1]}`;
}

/** Whether `v` is at least `min`. */
export function atLeast(v: ProtocolVersion, min: ProtocolVersion): boolean {
  return v[0] !== min[0] ? v[0] > min[0] : v[1] >= min[1];
}

/**
 * The protocol version that added goals (`GoalUpdate`) and agent swarms (`SwarmUpdate`).
 * Clients that declare an older version never see them.
 */
export const GOALS_AND_SWARMS_VERSION: ProtocolVersion = [1, 12];

/**
 * The version that added `Notification` events (finished background tasks and agents, sent
 * between turns too): 1.10, as the reference (Kimi-Py) sends them to 1.10 clients.
 */
export const NOTIFICATIONS_VERSION: ProtocolVersion = [1, 10];

/** The version that introduced each message type (types not listed exist since 1.0). */
export const MESSAGE_MIN_VERSION: Readonly<Record<string, ProtocolVersion>> = {
  TurnEnd: [1, 2],
  QuestionRequest: [1, 4],
  SteerInput: [1, 5],
  PlanDisplay: [1, 7],
  HookTriggered: [1, 7],
  HookResolved: [1, 7],
  HookRequest: [1, 7],
  BtwBegin: [1, 9],
  BtwEnd: [1, 9],
  StepRetry: [1, 10],
  Notification: NOTIFICATIONS_VERSION,
  GoalUpdate: GOALS_AND_SWARMS_VERSION,
  SwarmUpdate: GOALS_AND_SWARMS_VERSION,
};

/** The version that added approval rule choices (grant patterns, options, `approve_always`). */
export const APPROVAL_RULES_VERSION: ProtocolVersion = [1, 11];

/** Payload fields introduced after a message type, by type: field → version. */
export const FIELD_MIN_VERSION: Readonly<
  Record<string, Readonly<Record<string, ProtocolVersion>>>
> = {
  ApprovalRequest: {
    source_kind: [1, 6],
    source_id: [1, 6],
    agent_id: [1, 6],
    subagent_type: [1, 6],
    source_description: [1, 6],
    grant_patterns: APPROVAL_RULES_VERSION,
    rule_file: APPROVAL_RULES_VERSION,
    options: APPROVAL_RULES_VERSION,
  },
  ApprovalResponse: { feedback: [1, 6] },
  SubagentEvent: { agent_id: [1, 6], subagent_type: [1, 6] },
};

/** Fields renamed in a version: type → [new name, old name, version of the rename]. */
export const FIELD_RENAMES: Readonly<Record<string, readonly [string, string, ProtocolVersion]>> = {
  SubagentEvent: ["parent_tool_call_id", "task_tool_call_id", [1, 6]],
};

/** Message types renamed in a version: new name → [old name, version of the rename]. */
export const TYPE_RENAMES: Readonly<Record<string, readonly [string, ProtocolVersion]>> = {
  ApprovalResponse: ["ApprovalRequestResolved", [1, 1]],
};

/** Display block fields introduced later: block type → field → version. */
export const DISPLAY_FIELD_MIN_VERSION: Readonly<
  Record<string, Readonly<Record<string, ProtocolVersion>>>
> = {
  diff: { is_summary: [1, 8] },
};

/** Whether a client of version `v` knows message type `type`. */
export function knowsType(v: ProtocolVersion | null, type: string): boolean {
  if (v === null) return true;
  const min = MESSAGE_MIN_VERSION[type];
  return min === undefined || atLeast(v, min);
}

function filterDisplay(v: ProtocolVersion, blocks: unknown): unknown {
  if (!Array.isArray(blocks)) return blocks;
  return blocks.map((b) => {
    if (!b || typeof b !== "object") return b;
    const fields = DISPLAY_FIELD_MIN_VERSION[(b as { type?: string }).type ?? ""];
    if (!fields) return b;
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(b)) {
      const min = fields[k];
      if (min === undefined || atLeast(v, min)) out[k] = val;
    }
    return out;
  });
}

/**
 * The envelope as a client of `version` should see it, or null when that client does not know
 * the type (the caller then drops it, answering requests itself). The input is not modified.
 */
export function filterForVersion(version: ProtocolVersion | null, env: Envelope): Envelope | null {
  if (version === null) return env;
  if (!knowsType(version, env.type)) return null;
  let payload: Record<string, unknown> = { ...env.payload };

  if (env.type === "SubagentEvent") {
    const inner = payload.event as Envelope | undefined;
    if (inner && typeof inner === "object" && typeof inner.type === "string") {
      const filtered = filterForVersion(version, {
        type: inner.type,
        payload: inner.payload ?? {},
      });
      if (filtered === null) return null;
      payload.event = filtered;
    }
  }

  const rename = FIELD_RENAMES[env.type];
  if (rename && !atLeast(version, rename[2]) && rename[0] in payload) {
    const renamed: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(payload)) renamed[k === rename[0] ? rename[1] : k] = val;
    payload = renamed;
  }

  const fields = FIELD_MIN_VERSION[env.type];
  if (fields) {
    for (const [k, min] of Object.entries(fields)) {
      if (!atLeast(version, min)) delete payload[k];
    }
  }

  if (Array.isArray(payload.display)) payload.display = filterDisplay(version, payload.display);
  const rv = payload.return_value as Record<string, unknown> | undefined;
  if (rv && typeof rv === "object" && Array.isArray(rv.display)) {
    payload.return_value = { ...rv, display: filterDisplay(version, rv.display) };
  }

  if (
    env.type === "ApprovalResponse" && payload.response === "approve_always" &&
    !atLeast(version, APPROVAL_RULES_VERSION)
  ) {
    // Older clients know the answer as a grant for the session.
    payload.response = "approve_for_session";
  }

  const typeRename = TYPE_RENAMES[env.type];
  const type = typeRename && !atLeast(version, typeRename[1]) ? typeRename[0] : env.type;
  return { type, payload };
}

/** What the server knows about its client. */
export interface ClientProfile {
  /** Declared protocol version (null: no initialize, or unparsable). */
  version: ProtocolVersion | null;
  /** `client.name` from initialize, if any. */
  name: string | null;
}

/** A known client whose schema is stricter than its declared version implies. */
export interface ClientQuirk {
  /** Client name prefix, e.g. `kimi-agent-sdk/`. */
  namePrefix: string;
  /** Message types the client rejects although its version lists them. */
  dropTypes: readonly string[];
  /** Whether `SubagentEvent.parent_tool_call_id` must be a non-null string. */
  requireParentToolCallId: boolean;
}

/**
 * Known quirks: `@moonshot-ai/kimi-agent-sdk` 0.1.x declares 1.7 but its event parser does
 * not know `PlanDisplay` and requires a string `parent_tool_call_id`.
 */
export const CLIENT_QUIRKS: readonly ClientQuirk[] = [
  { namePrefix: "kimi-agent-sdk/", dropTypes: ["PlanDisplay"], requireParentToolCallId: true },
];

/** {@link filterForVersion} plus the quirks of known clients. */
export function filterForClient(client: ClientProfile, env: Envelope): Envelope | null {
  const out = filterForVersion(client.version, env);
  if (out === null || client.name === null) return out;
  for (const q of CLIENT_QUIRKS) {
    if (!client.name.startsWith(q.namePrefix)) continue;
    if (q.dropTypes.includes(out.type)) return null;
    if (out.type === "SubagentEvent" && q.requireParentToolCallId) {
      const id = out.payload.parent_tool_call_id ?? out.payload.task_tool_call_id;
      if (typeof id !== "string") return null;
      const inner = out.payload.event as Envelope | undefined;
      if (inner && q.dropTypes.includes(inner.type)) return null;
    }
  }
  return out;
}
