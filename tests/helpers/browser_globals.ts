/**
 * Type names for the callbacks browser tests hand to the page (`page.evaluate`, `$eval`,
 * `waitForFunction`): they run in chromium, but are type-checked with Deno's libraries, which
 * have no DOM. Referencing the `dom` library instead would change the global types of the whole
 * checked program (`deno task check` checks every test at once), so the few names the tests use
 * are declared here, loosely.
 *
 * @module
 */

// deno-lint-ignore no-explicit-any
type Loose = any;

declare global {
  /** The page's document. */
  const document: Loose;
  /** The page's computed styles. */
  const getComputedStyle: Loose;
  /** The page's mutation observer. */
  const MutationObserver: Loose;
  /** Drag-and-drop and clipboard payloads. */
  const DataTransfer: Loose;
  /** A drag event. */
  const DragEvent: Loose;
  /** A clipboard event. */
  const ClipboardEvent: Loose;
  /** A page element. */
  type Element = Loose;
  /** A page element. */
  type HTMLElement = Loose;
  /** An input element. */
  type HTMLInputElement = Loose;
  /** A text area. */
  type HTMLTextAreaElement = Loose;
  /** A link. */
  type HTMLAnchorElement = Loose;
  /** A select box. */
  type HTMLSelectElement = Loose;
  /** A details element. */
  type HTMLDetailsElement = Loose;
  /** A DOM range. */
  type Range = Loose;
  /** The page's CSS namespace (the Custom Highlight registry is `CSS.highlights`). */
  const CSS: Loose;
}

export {};
