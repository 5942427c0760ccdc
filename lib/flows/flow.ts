/**
 * Prompt flows: directed graphs of prompts (reference §6.8, §10). A flow has exactly one BEGIN
 * and one END node; `task` nodes are sent to the model as they are, `decision` nodes ask the
 * model to pick one of their labeled outgoing edges with `<choice>...</choice>`.
 *
 * This module holds the graph types, the errors of the parsers and the validation shared by
 * the Mermaid ({@link ./mermaid.ts}) and D2 ({@link ./d2.ts}) front ends.
 *
 * @module
 */
import * as z from "zod";
import { ContentPartSchema } from "../llm/message.ts";

/** What a node does when the flow reaches it. */
export const FlowNodeKind = z.enum(["begin", "end", "task", "decision"]);
/** What a node does when the flow reaches it. */
export type FlowNodeKind = z.infer<typeof FlowNodeKind>;

/** One node of a flow. */
export const FlowNode = z.object({
  /** Node id (unique in the flow). */
  id: z.string(),
  /** The prompt: text, or content parts (the Ralph loop keeps images of the user input). */
  label: z.union([z.string(), z.array(ContentPartSchema)]),
  /** Node kind. */
  kind: FlowNodeKind,
});
/** One node of a flow. */
export type FlowNode = z.infer<typeof FlowNode>;

/** A directed edge; decision edges carry the choice label. */
export const FlowEdge = z.object({
  /** Source node id. */
  src: z.string(),
  /** Destination node id. */
  dst: z.string(),
  /** Choice label, or null. */
  label: z.string().nullable(),
});
/** A directed edge; decision edges carry the choice label. */
export type FlowEdge = z.infer<typeof FlowEdge>;

/** A validated flow. */
export interface Flow {
  /** Nodes by id, in definition order. */
  nodes: Record<string, FlowNode>;
  /** Outgoing edges by source node id, in definition order (every node has an entry). */
  outgoing: Record<string, FlowEdge[]>;
  /** Id of the BEGIN node. */
  beginId: string;
  /** Id of the END node. */
  endId: string;
}

/** Any problem with a flow diagram. */
export class FlowError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "FlowError";
  }
}

/** The diagram text could not be parsed (messages start with `Line N: `). */
export class FlowParseError extends FlowError {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "FlowParseError";
  }
}

/** The diagram parsed but is not a usable flow. */
export class FlowValidationError extends FlowError {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "FlowValidationError";
  }
}

/** `Line <n>: <message>`. */
export function lineError(lineNo: number, message: string): string {
  return `Line ${lineNo}: ${message}`;
}

/** Kind implied by a label: `begin` / `end` (case-insensitive, trimmed), else `task`. */
export function kindOfLabel(label: string): FlowNodeKind {
  const norm = label.trim().toLowerCase();
  if (norm === "begin") return "begin";
  if (norm === "end") return "end";
  return "task";
}

/** Collects node definitions, keeping explicit labels over implicit (bare id) ones. */
export class NodeTable {
  #nodes = new Map<string, { node: FlowNode; explicit: boolean }>();

  /**
   * Define or reference node `id`. A bare reference (`label` null) uses the id as label and
   * never overrides an explicit definition; two different explicit labels conflict.
   *
   * @throws {FlowParseError} `Line N: Conflicting definition for node "X"`, or
   * `Line N: Node label cannot be empty`.
   */
  add(id: string, label: string | null, lineNo: number): FlowNode {
    const text = label ?? id;
    if (!text) throw new FlowParseError(lineError(lineNo, "Node label cannot be empty"));
    const node: FlowNode = { id, label: text, kind: kindOfLabel(text) };
    const explicit = label !== null;
    const existing = this.#nodes.get(id);
    if (!existing) {
      this.#nodes.set(id, { node, explicit });
      return node;
    }
    if (existing.node.label === node.label) return existing.node;
    if (!explicit) return existing.node;
    if (!existing.explicit) {
      this.#nodes.set(id, { node, explicit: true });
      return node;
    }
    throw new FlowParseError(lineError(lineNo, `Conflicting definition for node "${id}"`));
  }

  /** The nodes in definition order. */
  nodes(): Record<string, FlowNode> {
    const out: Record<string, FlowNode> = {};
    for (const [id, def] of this.#nodes) out[id] = def.node;
    return out;
  }
}

/**
 * Build a validated flow from parsed nodes and edges: every node gets an `outgoing` entry,
 * `task` nodes with more than one outgoing edge become `decision` nodes, then
 * {@link validateFlow} runs.
 */
export function buildFlow(
  parsed: Record<string, FlowNode>,
  edges: readonly FlowEdge[],
): Flow {
  const outgoing: Record<string, FlowEdge[]> = {};
  for (const id of Object.keys(parsed)) outgoing[id] = [];
  for (const e of edges) {
    (outgoing[e.src] ??= []).push(e);
    outgoing[e.dst] ??= [];
  }
  const nodes: Record<string, FlowNode> = {};
  for (const [id, node] of Object.entries(parsed)) {
    nodes[id] = node.kind === "task" && outgoing[id].length > 1
      ? { ...node, kind: "decision" }
      : node;
  }
  const { beginId, endId } = validateFlow(nodes, outgoing);
  return { nodes, outgoing, beginId, endId };
}

/**
 * Check the flow rules: exactly one BEGIN and one END node; among the nodes reachable from
 * BEGIN, a node with several outgoing edges must label all of them, with distinct non-blank
 * labels; END must be reachable from BEGIN.
 *
 * @throws {FlowValidationError} `Expected exactly one BEGIN node, found N`,
 * `Expected exactly one END node, found N`, `Node "X" has an unlabeled edge`,
 * `Node "X" has duplicate edge labels`, `END node is not reachable from BEGIN`.
 */
export function validateFlow(
  nodes: Readonly<Record<string, FlowNode>>,
  outgoing: Readonly<Record<string, readonly FlowEdge[]>>,
): { beginId: string; endId: string } {
  const all = Object.values(nodes);
  const begins = all.filter((n) => n.kind === "begin");
  const ends = all.filter((n) => n.kind === "end");
  if (begins.length !== 1) {
    throw new FlowValidationError(`Expected exactly one BEGIN node, found ${begins.length}`);
  }
  if (ends.length !== 1) {
    throw new FlowValidationError(`Expected exactly one END node, found ${ends.length}`);
  }
  const beginId = begins[0].id;
  const endId = ends[0].id;

  const reachable = new Set<string>();
  const stack = [beginId];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (reachable.has(id)) continue;
    reachable.add(id);
    for (const e of outgoing[id] ?? []) if (!reachable.has(e.dst)) stack.push(e.dst);
  }
  for (const node of all) {
    if (!reachable.has(node.id)) continue;
    const edges = outgoing[node.id] ?? [];
    if (edges.length <= 1) continue;
    const labels: string[] = [];
    for (const e of edges) {
      if (e.label === null || !e.label.trim()) {
        throw new FlowValidationError(`Node "${node.id}" has an unlabeled edge`);
      }
      labels.push(e.label);
    }
    if (new Set(labels).size !== labels.length) {
      throw new FlowValidationError(`Node "${node.id}" has duplicate edge labels`);
    }
  }
  if (!reachable.has(endId)) throw new FlowValidationError("END node is not reachable from BEGIN");
  return { beginId, endId };
}
