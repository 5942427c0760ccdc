/**
 * The error answers of `kimi web` in the reference's shapes: `{"detail": "..."}` with a status,
 * and the 422 `{"detail": [{loc, msg, type}]}` of a body or parameter that fails validation.
 *
 * @module
 */
import type * as z from "zod";

/** An error a route answers with (`detail` is shown to the client). */
export class HttpError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** Create the error. */
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
  }
}

/** One validation problem. */
export interface ValidationItem {
  /** Where: `["body", "title"]`, `["path", "id"]`. */
  loc: (string | number)[];
  /** What is wrong. */
  msg: string;
  /** Kind of problem. */
  type: string;
}

/** A 422 answer. */
export class ValidationError extends Error {
  /** The problems. */
  readonly items: ValidationItem[];
  /** Create the error. */
  constructor(items: ValidationItem[]) {
    super(items.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "));
    this.items = items;
  }
}

/** The validation problems of a zod error, located under `where`. */
export function zodItems(where: string, err: z.ZodError): ValidationItem[] {
  return err.issues.map((i) => ({
    loc: [where, ...i.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    msg: i.message,
    type: i.code,
  }));
}

/** Parse `value` with `schema` or throw a 422 located under `where`. */
export function validate<T extends z.ZodType>(
  schema: T,
  value: unknown,
  where: string,
): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw new ValidationError(zodItems(where, r.error));
  return r.data;
}
