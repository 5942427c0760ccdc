/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * Entry of the browser page of `kimi web` and `kimi vis` (bundled by `scripts/build_page.ts`).
 *
 * @module
 */
import { mount } from "./app.tsx";
import { applyStoredLayout } from "./layout_apply.ts";

applyStoredLayout();
mount();
