/**
 * Zod builders for tool parameters whose JSON Schema (`z.toJSONSchema(s, {io: "input"})`) has
 * the same shape as the reference's pydantic schemas: integers without zod's implicit
 * safe-integer bounds, and nullable values spelled `anyOf: [<type>, {"type": "null"}]`.
 *
 * @module
 */
import * as z from "zod";

/**
 * An integer. `z.int()` would add `minimum`/`maximum` safe-integer bounds to the JSON Schema;
 * this one emits only `{"type": "integer"}` plus the bounds added with `.min()` / `.max()`.
 */
export function integer(): z.ZodNumber {
  return z.number().refine(Number.isInteger, { message: "Expected an integer" }).meta({
    type: "integer",
  });
}

/**
 * `inner` or `null`, exported as `anyOf: [inner, {"type": "null"}]` even when `inner` is a bare
 * type (zod would otherwise compact it to `type: [..., "null"]`).
 */
export function orNull<T extends z.ZodType>(inner: T): z.ZodUnion<[T, z.ZodNull]> {
  // A metadata key keeps zod from folding the branch into a `type` array; its value is
  // `undefined`, so nothing extra reaches the emitted schema.
  return z.union([inner.meta({ description: undefined }) as T, z.null()]);
}
