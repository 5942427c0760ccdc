/**
 * Custom tools may still be written in the older, call-style form: one `call(params, ctx)`
 * that does everything (and asks for approval itself with `ctx.requestApproval`). The loader
 * turns such a tool into the declarative contract: nothing declared, one execution.
 *
 * @module
 */
import type * as z from "zod";
import type { Tool, ToolCallContext, ToolReturnValue } from "./tool.ts";

/** A tool in the call-style form (custom tool modules). */
export interface CallStyleTool<P = any> {
  /** Name the model calls. */
  readonly name: string;
  /** Description for the model. */
  readonly description: string;
  /** Parameter schema. */
  readonly parameters: z.ZodType<P>;
  /** JSON Schema to send instead of deriving one from `parameters`. */
  readonly jsonSchema?: Record<string, unknown>;
  /** Run the call (validated parameters). */
  call(params: P, ctx: ToolCallContext): Promise<ToolReturnValue>;
}

/** The declarative form of a call-style tool: it declares no access and asks nothing itself. */
export function fromCallStyle<P>(tool: CallStyleTool<P>): Tool<P> {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    ...(tool.jsonSchema ? { jsonSchema: tool.jsonSchema } : {}),
    resolve: (params) => ({ execute: (ctx) => tool.call(params, ctx) }),
  };
}
