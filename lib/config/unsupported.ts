/**
 * Configuration keys the reference accepts that this build does not act on. They are never
 * silently ignored: each one a user sets to something other than its default is reported once
 * per run, with what happens instead. A key at its default value (as every config kimi writes
 * itself holds it) asks for nothing this build lacks and is not reported.
 *
 * @module
 */

/** A key this build accepts but does not act on, and what the user gets instead. */
interface UnsupportedKey {
  /** Dotted path, `*` for any map key (e.g. a provider name). */
  readonly path: string;
  /** The default value: the key at this value asks for nothing this build lacks. */
  readonly defaultValue: unknown;
  /** What happens instead. */
  readonly instead: string;
}

const UNSUPPORTED: readonly UnsupportedKey[] = [
  {
    path: "notifications.claim_stale_after_ms",
    defaultValue: 15000,
    instead: "notifications are delivered in memory by the kimi process that owns the session, " +
      "so there are no stale claims to take over",
  },
];

/** One notice per unsupported key set in raw config `data`, in a stable order. */
export function unsupportedConfigNotices(data: unknown): string[] {
  const out: string[] = [];
  for (const key of UNSUPPORTED) {
    for (const [path, value] of lookup(data, key.path.split("."), [])) {
      if (value === key.defaultValue) continue;
      out.push(
        `Config: \`${path}\` is not supported by this build and is ignored: ${key.instead}.`,
      );
    }
  }
  return out;
}

function lookup(data: unknown, parts: string[], seen: string[]): [string, unknown][] {
  if (parts.length === 0) return [[seen.join("."), data]];
  if (data === null || typeof data !== "object" || Array.isArray(data)) return [];
  const [head, ...rest] = parts;
  const obj = data as Record<string, unknown>;
  const keys = head === "*" ? Object.keys(obj) : Object.hasOwn(obj, head) ? [head] : [];
  return keys.flatMap((k) => lookup(obj[k], rest, [...seen, k]));
}
