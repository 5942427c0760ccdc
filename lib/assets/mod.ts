/**
 * Access to the program's own text assets (tool descriptions, agent specs and prompts,
 * built-in skills), embedded at build time by `scripts/embed_assets.ts`.
 *
 * @module
 */
import { EMBEDDED_ASSETS } from "./embedded.gen.ts";

/** The text of an asset by repository-relative path, e.g. `tools/read_file.md`. */
export function readAsset(path: string): string {
  const text = EMBEDDED_ASSETS[path];
  if (text === undefined) {
    throw new Error(`Asset not embedded: ${path} (run \`deno task embed\`)`);
  }
  return text;
}

/** Whether an asset exists. */
export function hasAsset(path: string): boolean {
  return path in EMBEDDED_ASSETS;
}

/** Paths of all embedded assets under a prefix. */
export function listAssets(prefix: string): string[] {
  return Object.keys(EMBEDDED_ASSETS).filter((p) => p.startsWith(prefix));
}

/**
 * Substitute `${NAME}` variables. Unknown variables are kept verbatim unless `strict`, in
 * which case a missing one throws with its name.
 */
export function renderTemplate(
  template: string,
  vars: Readonly<Record<string, string>>,
  opts: { strict?: boolean; source?: string } = {},
): string {
  return template.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
    if (Object.hasOwn(vars, name)) return vars[name];
    if (opts.strict) {
      throw new Error(`Missing system prompt arg in ${opts.source ?? "template"}: ${name}`);
    }
    return whole;
  });
}
