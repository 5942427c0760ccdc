/**
 * An entry of `deno task bundle` (not imported by kimi's code): the `events` package, the
 * userland port of Node's `EventEmitter`, which the bundle gives commander in place of
 * `node:events` (see `useEventsPort` in `scripts/bundle_transforms.ts`).
 *
 * @module
 */
export { EventEmitter } from "events";
