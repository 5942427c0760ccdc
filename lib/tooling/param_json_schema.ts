/**
 * The JSON Schema a tool's parameters are offered to the model as: `z.toJSONSchema` of the
 * input side (`io: "input"`, so defaulted fields are optional), anything unrepresentable as
 * `{}`, without `$schema`. Built-in tools carry theirs precomputed (`tools/param_schemas.gen.ts`,
 * written by `deno task embed`), so a run converts only loaded tools' schemas.
 *
 * @module
 */
import * as z from "zod";

/** JSON Schema of a parameter schema as the model sees it (`$schema` removed). */
export function paramJsonSchema(parameters: z.ZodType): Record<string, unknown> {
  const schema = z.toJSONSchema(parameters, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  delete schema.$schema;
  return schema;
}
