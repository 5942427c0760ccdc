/**
 * Values built on first use. A zod schema costs some microseconds to construct, and a module of
 * protocol schemas builds hundreds of them when it loads, though a run uses a few: a record of
 * builders whose properties are made (once) when first read moves that work off the start path.
 *
 * @module
 */

/** The record {@link lazyRecord} returns: each builder's result under the builder's key. */
export type LazyRecord<T extends Record<string, () => unknown>> = {
  readonly [K in keyof T]: ReturnType<T[K]>;
};

/**
 * A record whose property `k` is `builders[k]()`, called on the first read of `k` and kept.
 * Keys are enumerable from the start (`k in record` and `Object.keys` see every key).
 */
export function lazyRecord<T extends Record<string, () => unknown>>(builders: T): LazyRecord<T> {
  const record: Record<string, unknown> = {};
  for (const [key, build] of Object.entries(builders)) {
    Object.defineProperty(record, key, {
      enumerable: true,
      configurable: true,
      get() {
        const value = build();
        Object.defineProperty(record, key, { value, enumerable: true, writable: false });
        return value;
      },
    });
  }
  return record as LazyRecord<T>;
}

/** A function returning `build()`, called on the first call and kept. */
export function lazyValue<T>(build: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = build();
      made = true;
    }
    return value;
  };
}
