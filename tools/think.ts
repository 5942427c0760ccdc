/**
 * Think: a scratchpad call that records a thought and does nothing else.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolFactory } from "../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Think parameters. */
export const thinkParamsSchema = lazyValue(() =>
  z.object({
    thought: z.string().describe("The thought to record."),
  })
);
/** Think parameters. */
export type ThinkParams = z.infer<ReturnType<typeof thinkParamsSchema>>;

/** Builds the Think tool. */
export const thinkTool: ToolFactory = (): Tool<ThinkParams> => ({
  name: "Think",
  description: readAsset("tools/think.md"),
  get parameters() {
    return thinkParamsSchema();
  },
  jsonSchema: PARAM_JSON_SCHEMAS.Think,
  resolve: () => ({
    execute: () => Promise.resolve(toolOk({ output: "", message: "Thought logged" })),
  }),
});
