/**
 * External tools: tools a wire client declares at `initialize` and executes itself. Calling
 * one sends a `ToolCallRequest` (id = tool call id) on the turn's wire and waits for the
 * client's `ToolResult`.
 *
 * @module
 */
import * as z from "zod";
import type { Toolset } from "../../soul/toolset.ts";
import type { Tool, ToolCallContext, ToolInvocation } from "../../tooling/tool.ts";
import { PendingRequest, type WireMessage } from "../../wire/messages.ts";
import type { ExternalToolDecl } from "../../wire/jsonrpc.ts";

/** Reason given when an external tool would shadow a built-in one. */
export const CONFLICT_REASON = "conflicts with builtin tool";

const JSON_TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SCHEMA_SINGLES = [
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "additionalItems",
];

/**
 * Check that a value is a structurally valid JSON Schema (the keywords tools use). Returns
 * null when valid, else a message naming the offending location.
 */
export function checkJsonSchema(schema: unknown, path = "parameters"): string | null {
  if (typeof schema === "boolean") return null;
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) {
    return `${path}: ${JSON.stringify(schema)} is not of type 'object', 'boolean'`;
  }
  const s = schema as Record<string, unknown>;
  if ("type" in s) {
    const t = s.type;
    const types = Array.isArray(t) ? t : [t];
    if (types.length === 0 || types.some((x) => typeof x !== "string" || !JSON_TYPES.has(x))) {
      return `${path}.type: ${JSON.stringify(t)} is not valid under any of the given schemas`;
    }
  }
  if ("required" in s) {
    const r = s.required;
    if (!Array.isArray(r) || r.some((x) => typeof x !== "string")) {
      return `${path}.required: ${JSON.stringify(r)} is not of type 'array' of strings`;
    }
    if (new Set(r).size !== r.length) {
      return `${path}.required: ${JSON.stringify(r)} has non-unique elements`;
    }
  }
  if ("enum" in s && !Array.isArray(s.enum)) {
    return `${path}.enum: ${JSON.stringify(s.enum)} is not of type 'array'`;
  }
  if ("description" in s && typeof s.description !== "string") {
    return `${path}.description: ${JSON.stringify(s.description)} is not of type 'string'`;
  }
  for (const key of SCHEMA_MAPS) {
    if (!(key in s)) continue;
    const m = s[key];
    if (!m || typeof m !== "object" || Array.isArray(m)) {
      return `${path}.${key}: ${JSON.stringify(m)} is not of type 'object'`;
    }
    for (const [name, sub] of Object.entries(m)) {
      const err = checkJsonSchema(sub, `${path}.${key}.${name}`);
      if (err) return err;
    }
  }
  for (const key of SCHEMA_LISTS) {
    if (!(key in s)) continue;
    const l = s[key];
    if (!Array.isArray(l) || l.length === 0) {
      return `${path}.${key}: ${JSON.stringify(l)} is not a non-empty 'array'`;
    }
    for (const [i, sub] of l.entries()) {
      const err = checkJsonSchema(sub, `${path}.${key}[${i}]`);
      if (err) return err;
    }
  }
  for (const key of [...SCHEMA_SINGLES, "items", "additionalProperties"]) {
    if (!(key in s)) continue;
    const sub = s[key];
    if (key === "items" && Array.isArray(sub)) {
      for (const [i, item] of sub.entries()) {
        const err = checkJsonSchema(item, `${path}.items[${i}]`);
        if (err) return err;
      }
      continue;
    }
    const err = checkJsonSchema(sub, `${path}.${key}`);
    if (err) return err;
  }
  return null;
}

/** A tool implemented by the wire client. */
export class ExternalTool implements Tool<unknown> {
  /** Name the model calls. */
  readonly name: string;
  /** Description for the model. */
  readonly description: string;
  /** Arguments are passed through; the client validates them. */
  readonly parameters: z.ZodType<unknown> = z.unknown();
  /** The client's JSON Schema (without `$schema`). */
  readonly jsonSchema: Record<string, unknown>;
  readonly #emit: (msg: WireMessage) => void;

  /** Create the tool; `emit` sends a message on the running turn's wire. */
  constructor(decl: ExternalToolDecl, emit: (msg: WireMessage) => void) {
    this.name = decl.name;
    this.description = decl.description;
    const { $schema: _drop, ...schema } = decl.parameters;
    this.jsonSchema = schema;
    this.#emit = emit;
  }

  /** A call: the client runs it (it declares nothing; the client asks for what it needs). */
  resolve(params: unknown): ToolInvocation {
    return {
      execute: async (ctx: ToolCallContext) => {
        const req = new PendingRequest("ToolCallRequest", {
          id: ctx.toolCallId,
          name: this.name,
          // The model's own bytes: clients that hash or diff the arguments see what it sent.
          arguments: ctx.rawArguments !== undefined
            ? ctx.rawArguments
            : JSON.stringify(params ?? {}),
        });
        this.#emit(req);
        return (await req.result).return_value;
      },
    };
  }
}

/** Outcome of registering external tools. */
export interface ExternalToolsOutcome {
  /** Names registered. */
  accepted: string[];
  /** Names refused, with the reason. */
  rejected: { name: string; reason: string }[];
}

/**
 * Register declared tools in a toolset: a clash with a non-external tool is rejected, an
 * invalid schema is rejected with the validation text, an external name is replaced.
 */
export function registerExternalTools(
  toolset: Toolset,
  decls: readonly ExternalToolDecl[],
  emit: (msg: WireMessage) => void,
): ExternalToolsOutcome {
  const out: ExternalToolsOutcome = { accepted: [], rejected: [] };
  for (const decl of decls) {
    const existing = toolset.get(decl.name);
    if (existing && !(existing instanceof ExternalTool)) {
      out.rejected.push({ name: decl.name, reason: CONFLICT_REASON });
      continue;
    }
    const err = checkJsonSchema(decl.parameters);
    if (err) {
      out.rejected.push({ name: decl.name, reason: err });
      continue;
    }
    toolset.add(new ExternalTool(decl, emit));
    out.accepted.push(decl.name);
  }
  return out;
}
