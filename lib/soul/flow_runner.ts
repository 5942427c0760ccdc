/**
 * Running prompt flows and the Ralph loop (reference §6.8). Every executed node is a nested
 * turn of the soul (its own `TurnBegin`/`TurnEnd` inside the outer turn); decision nodes ask
 * the model for a `<choice>` and follow the edge with that label.
 *
 * @module
 */
import type { Flow, FlowEdge, FlowNode } from "../flows/flow.ts";
import { parseChoice } from "../flows/choice.ts";
import { type ContentPart, extractText } from "../llm/message.ts";
import { log } from "../log.ts";
import type { UserInput } from "../wire/messages.ts";
import { MaxStepsReached } from "./errors.ts";
import type { TurnResult } from "./turn.ts";

/** Moves allowed in a skill flow before it is stopped. */
export const DEFAULT_MAX_FLOW_MOVES = 1000;

/** Appended to a decision prompt when the last answer had no valid choice. */
export const INVALID_CHOICE_SUFFIX = "\n\nYour last response did not include a valid choice. " +
  "Reply with one of the choices using <choice>...</choice>.";

/** Appended to the user's prompt at the Ralph loop's decision node. */
export const RALPH_DECISION_SUFFIX = ". (You are running in an automated loop where the same " +
  "prompt is fed repeatedly. Only choose STOP when the task is fully complete. Including it " +
  "will stop further iterations. If you are not 100% sure, choose CONTINUE.)";

/** What the runner needs from the soul: one nested turn per node. */
export interface FlowHost {
  /** Run `prompt` as a nested turn (TurnBegin/TurnEnd inside the running turn). */
  runNestedTurn(prompt: string | ContentPart[]): Promise<TurnResult>;
}

/** Options of {@link FlowRunner}. */
export interface FlowRunnerOptions {
  /** Nodes executed at most (BEGIN excluded); exceeding it throws MaxStepsReached. */
  maxMoves?: number;
  /** Flow name for logs. */
  name?: string;
}

/** The prompt of a decision node: its label, the branch labels, and how to answer. */
export function decisionPrompt(node: FlowNode, edges: readonly FlowEdge[]): string {
  const label = typeof node.label === "string" ? node.label : extractText(node.label, " ");
  const choices = edges.flatMap((e) => e.label ? [`- ${e.label}`] : []);
  return [
    label,
    "",
    "Available branches:",
    ...choices,
    "",
    "Reply with a choice using <choice>...</choice>.",
  ].join("\n");
}

/** Runs a flow on a soul. */
export class FlowRunner {
  readonly #flow: Flow;
  readonly #maxMoves: number;
  readonly #name: string;

  /** Create a runner for `flow`. */
  constructor(flow: Flow, opts: FlowRunnerOptions = {}) {
    this.#flow = flow;
    this.#maxMoves = opts.maxMoves ?? DEFAULT_MAX_FLOW_MOVES;
    this.#name = opts.name ?? "flow";
  }

  /**
   * The Ralph loop for one user input: BEGIN → R1 (the input itself, parts and images kept) → R2
   * (decision: the prompt text plus {@link RALPH_DECISION_SUFFIX}) with `CONTINUE` → R2 and
   * `STOP` → END. `iterations` < 0 means unlimited; otherwise `iterations + 1` moves.
   */
  static ralphLoop(input: UserInput, iterations: number): FlowRunner {
    const content: ContentPart[] = typeof input === "string"
      ? [{ type: "text", text: input }]
      : [...input];
    const promptText = extractText(content, " ").trim();
    const flow: Flow = {
      nodes: {
        BEGIN: { id: "BEGIN", label: "BEGIN", kind: "begin" },
        END: { id: "END", label: "END", kind: "end" },
        R1: { id: "R1", label: typeof input === "string" ? input : content, kind: "task" },
        R2: { id: "R2", label: `${promptText}${RALPH_DECISION_SUFFIX}`.trim(), kind: "decision" },
      },
      outgoing: {
        BEGIN: [{ src: "BEGIN", dst: "R1", label: null }],
        R1: [{ src: "R1", dst: "R2", label: null }],
        R2: [
          { src: "R2", dst: "R2", label: "CONTINUE" },
          { src: "R2", dst: "END", label: "STOP" },
        ],
        END: [],
      },
      beginId: "BEGIN",
      endId: "END",
    };
    const maxMoves = iterations < 0 ? Number.MAX_SAFE_INTEGER : iterations + 1;
    return new FlowRunner(flow, { maxMoves, name: "ralph" });
  }

  /**
   * Run the flow from BEGIN until END, a tool rejection, or a node without outgoing edges.
   * Arguments are not supported: with non-blank `args` nothing runs (a warning is logged).
   * Resolves with the last nested turn's result (null when no node ran).
   *
   * @throws {MaxStepsReached} when the flow would execute more than `maxMoves` nodes (the
   * count is the total steps of the nested turns).
   */
  async run(host: FlowHost, args = ""): Promise<TurnResult | null> {
    if (args.trim()) {
      log("WARNING", "flow", `Flow ${this.#name} ignores arguments: ${args}`);
      return null;
    }
    let current = this.#flow.beginId;
    let moves = 0;
    let totalSteps = 0;
    let last: TurnResult | null = null;
    for (;;) {
      const node = this.#flow.nodes[current];
      const edges = this.#flow.outgoing[current] ?? [];
      if (node.kind === "end") return last;
      if (node.kind === "begin") {
        if (edges.length === 0) {
          log("ERROR", "flow", `Flow ${this.#name}: BEGIN node has no outgoing edges; stopping.`);
          return last;
        }
        current = edges[0].dst;
        continue;
      }
      if (moves >= this.#maxMoves) throw new MaxStepsReached(totalSteps);
      const step = await this.#executeNode(host, node, edges);
      totalSteps += step.steps;
      last = step.result ?? last;
      if (step.next === null) return last;
      moves++;
      current = step.next;
    }
  }

  async #executeNode(
    host: FlowHost,
    node: FlowNode,
    edges: readonly FlowEdge[],
  ): Promise<{ next: string | null; steps: number; result: TurnResult | null }> {
    if (edges.length === 0) {
      log("ERROR", "flow", `Flow ${this.#name}: node "${node.id}" has no outgoing edges.`);
      return { next: null, steps: 0, result: null };
    }
    const base = node.kind === "decision" ? decisionPrompt(node, edges) : node.label;
    let prompt = base;
    let steps = 0;
    for (;;) {
      const result = await host.runNestedTurn(prompt);
      steps += result.steps;
      if (result.reason === "tool_rejected") {
        log("ERROR", "flow", `Flow ${this.#name} stopped after a tool rejection.`);
        return { next: null, steps, result };
      }
      if (node.kind !== "decision") return { next: edges[0].dst, steps, result };
      const text = result.finalMessage ? extractText(result.finalMessage.content, " ") : "";
      const choice = parseChoice(text);
      const edge = choice ? edges.find((e) => e.label === choice) : undefined;
      if (edge) return { next: edge.dst, steps, result };
      log(
        "WARNING",
        "flow",
        `Flow ${this.#name}: invalid choice ${choice ?? "<missing>"}; available: ${
          edges.map((e) => e.label ?? "").join(", ")
        }.`,
      );
      prompt = `${base as string}${INVALID_CHOICE_SUFFIX}`;
    }
  }
}

/** Run the Ralph loop for `input` on `host`; resolves with the last nested turn's result. */
export async function runRalphLoop(
  host: FlowHost,
  input: UserInput,
  iterations: number,
): Promise<TurnResult> {
  const last = await FlowRunner.ralphLoop(input, iterations).run(host);
  return last ?? { reason: "no_tool_calls", finalMessage: null, steps: 0 };
}
