/**
 * Keys of a raw configuration that the schema does not know (a typo, a key of another tool).
 * The schema drops them silently; each one is reported once per run with its path and the
 * nearest known key, so `max_contxt_size` under `[models.m]` does not go unnoticed.
 *
 * @module
 */
import type * as z from "zod";

/** A key of the raw config the schema does not know. */
export interface UnknownConfigKey {
  /** Dotted path of the key, list indexes in brackets (`hooks[0].evnt`). */
  path: string;
  /** The nearest known key at the same place, as a dotted path. */
  nearest: string | null;
}

/** Keys the schema drops on purpose: legacy names and aliases handled before validation. */
const TOLERATED: ReadonlySet<string> = new Set([
  "skip_yolo_prompt_injection",
  "loop_control.max_steps_per_run",
]);

/** Every key of `data` that `schema` does not know, in document order. */
export function unknownConfigKeys(schema: z.ZodType, data: unknown): UnknownConfigKey[] {
  const out: UnknownConfigKey[] = [];
  walk(schema, data, "", out);
  return out;
}

/** One notice per unknown key of `data` (see {@link unknownConfigKeys}). */
export function unknownConfigKeyNotices(schema: z.ZodType, data: unknown): string[] {
  return unknownConfigKeys(schema, data).map(({ path, nearest }) =>
    `Config: \`${path}\` is not a known key and is ignored` +
    (nearest ? ` (did you mean \`${nearest}\`?).` : ".")
  );
}

/** The zod definition of a schema (zod 4 keeps it on `_zod.def`). */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The structural schema under wrappers (default, optional, nullable, pipes). */
function unwrap(schema: z.ZodType): z.ZodType {
  for (let i = 0; i < 20; i++) {
    const def = defOf(schema);
    if (def.innerType) {
      schema = def.innerType;
    } else if (def.type === "pipe" && def.in && def.out) {
      // preprocess: in = transform, out = schema; transform: in = schema, out = transform
      const inType = defOf(def.in).type;
      schema = inType === "transform" ? def.out : def.in;
    } else {
      return schema;
    }
  }
  return schema;
}

function walk(schema: z.ZodType, data: unknown, path: string, out: UnknownConfigKey[]): void {
  const s = unwrap(schema);
  const def = defOf(s);
  if (def.type === "object" && def.shape && isPlainObject(data)) {
    const known = Object.keys(def.shape);
    for (const [key, value] of Object.entries(data)) {
      const keyPath = path ? `${path}.${key}` : key;
      if (Object.hasOwn(def.shape, key)) {
        walk(def.shape[key], value, keyPath, out);
      } else if (!TOLERATED.has(keyPath)) {
        const near = nearestKey(key, known);
        out.push({
          path: keyPath,
          nearest: near === null ? null : path ? `${path}.${near}` : near,
        });
      }
    }
  } else if (def.type === "record" && def.valueType && isPlainObject(data)) {
    for (const [key, value] of Object.entries(data)) {
      walk(def.valueType, value, path ? `${path}.${key}` : key, out);
    }
  } else if (def.type === "array" && def.element && Array.isArray(data)) {
    data.forEach((item, i) => walk(def.element!, item, `${path}[${i}]`, out));
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * The known key closest to `key` (edit distance; a prefix of one another counts as close), or
 * null when none is close enough to be what was meant (at most 40% of the letters differ).
 */
export function nearestKey(key: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestScore = Infinity;
  const lower = key.toLowerCase();
  for (const k of known) {
    const score = k.startsWith(lower) || lower.startsWith(k)
      ? Math.min(1, editDistance(lower, k))
      : editDistance(lower, k);
    if (score < bestScore) {
      best = k;
      bestScore = score;
    }
  }
  return bestScore <= Math.max(2, Math.floor(key.length * 0.4)) ? best : null;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        prev[j] + 1,
        cur[j - 1] + 1,
        prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length];
}
