/**
 * Assertion names used across the tests, on top of `node:assert/strict`.
 *
 * @module
 */
import {
  deepStrictEqual,
  match,
  notDeepStrictEqual,
  ok,
  rejects,
  strictEqual,
  throws,
} from "node:assert/strict";

/** Deep strict equality. */
export const assertEquals: <T>(actual: unknown, expected: T, message?: string) => void =
  deepStrictEqual as never;
/** Deep strict inequality. */
export const assertNotEquals: (actual: unknown, expected: unknown, message?: string) => void =
  notDeepStrictEqual as never;
/** Identity (`===`). */
export const assertStrictEquals: <T>(actual: unknown, expected: T, message?: string) => void =
  strictEqual as never;
/** Truthiness. */
export const assert: (value: unknown, message?: string) => asserts value = ok as never;
/** Regex match. */
export const assertMatch: (value: string, re: RegExp, message?: string) => void = match as never;
/** Throws. */
export const assertThrows: (fn: () => unknown, expected?: RegExp | object) => void = (
  fn,
  expected,
) => expected === undefined ? throws(fn) : throws(fn, expected as RegExp);
/** Rejects. */
export const assertRejects: (
  fn: () => Promise<unknown>,
  expected?: RegExp | object,
) => Promise<void> = (fn, expected) =>
  expected === undefined ? rejects(fn) : rejects(fn, expected as RegExp);
/** String contains. */
export function assertStringIncludes(actual: string, expected: string, message?: string): void {
  ok(
    actual.includes(expected),
    message ?? `expected ${JSON.stringify(actual)} to contain ${JSON.stringify(expected)}`,
  );
}
