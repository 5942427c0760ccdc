/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The splitter between the session sidebar and the chat: drag it, or focus it and use ←/→
 * (Shift for bigger steps), Home/End; a double-click (or Enter) resets the width. The width is
 * clamped, kept in `localStorage` and applied as `--sidebar-width`. Hidden (by CSS) in the
 * drawer layout below 1024 px.
 *
 * @module
 */
import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { applySidebarWidth } from "./layout_apply.ts";
import {
  clampSidebarWidth,
  DEFAULT_SIDEBAR_WIDTH,
  maxSidebarWidth,
  MIN_SIDEBAR_WIDTH,
  saveSidebarWidth,
  storedSidebarWidth,
} from "./layout_prefs.ts";

/** Width change per arrow key press (px); Shift multiplies it by four. */
export const SPLITTER_STEP = 16;

/** The sidebar/chat splitter (`role="separator"`). */
export function SidebarSplitter(): JSX.Element {
  const [viewport, setViewport] = useState(() => innerWidth);
  // The wanted width; what applies is it clamped to the current window.
  const [wanted, setWanted] = useState(storedSidebarWidth);
  const drag = useRef<{ x: number; width: number; pointer: number } | null>(null);
  const width = clampSidebarWidth(wanted, viewport);

  useEffect(() => {
    const onResize = () => setViewport(innerWidth);
    addEventListener("resize", onResize);
    return () => removeEventListener("resize", onResize);
  }, []);
  useLayoutEffect(() => applySidebarWidth(width), [width]);

  const set = (next: number, keep = true) => {
    const w = clampSidebarWidth(next, innerWidth);
    setWanted(w);
    if (keep) saveSidebarWidth(w);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const step = e.shiftKey ? SPLITTER_STEP * 4 : SPLITTER_STEP;
    const next: Record<string, number> = {
      ArrowLeft: width - step,
      ArrowRight: width + step,
      Home: MIN_SIDEBAR_WIDTH,
      End: maxSidebarWidth(innerWidth),
      Enter: DEFAULT_SIDEBAR_WIDTH,
    };
    if (!(e.key in next)) return;
    e.preventDefault();
    set(next[e.key]);
  };

  return (
    <div
      class="splitter"
      role="separator"
      aria-orientation="vertical"
      aria-label="Resize the session list"
      aria-controls="sidebar"
      aria-valuenow={width}
      aria-valuemin={MIN_SIDEBAR_WIDTH}
      aria-valuemax={maxSidebarWidth(viewport)}
      tabIndex={0}
      title="Drag to resize; double-click to reset"
      onKeyDown={onKeyDown}
      onDblClick={() => set(DEFAULT_SIDEBAR_WIDTH)}
      onPointerDown={(e) => {
        if (e.button !== 0) return;
        e.preventDefault();
        (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
        drag.current = { x: e.clientX, width, pointer: e.pointerId };
      }}
      onPointerMove={(e) => {
        const d = drag.current;
        if (d && d.pointer === e.pointerId) set(d.width + e.clientX - d.x, false);
      }}
      onPointerUp={(e) => {
        const d = drag.current;
        if (!d || d.pointer !== e.pointerId) return;
        drag.current = null;
        set(d.width + e.clientX - d.x);
      }}
      onPointerCancel={() => {
        const d = drag.current;
        drag.current = null;
        if (d) set(d.width);
      }}
    />
  );
}
