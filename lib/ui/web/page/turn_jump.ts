/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * Bring a turn of the chat into view once it is rendered (a turn behind "Show earlier" is
 * rendered a frame or two after it is asked for).
 *
 * @module
 */

/** Frames to wait for the turn to be rendered. */
const MAX_FRAMES = 30;

/** Scroll the chat so turn `index` starts at its top, once the turn is in the page. */
export function scrollToTurn(index: number): void {
  let frames = 0;
  const tryNow = () => {
    const el = document.querySelector<HTMLElement>(`.chat [data-turn="${index}"]`);
    if (el) {
      el.scrollIntoView({ block: "start" });
      return;
    }
    if (++frames < MAX_FRAMES) requestAnimationFrame(tryNow);
  };
  requestAnimationFrame(tryNow);
}
