/**
 * YAML for agent specs and skill frontmatter. The program's own YAML (built-in agents, built-in
 * skills' frontmatter) is parsed at build time by `scripts/embed_assets.ts`, so a run that only
 * uses built-ins never loads the `yaml` package; any other text loads it on first use.
 *
 * @module
 */
import { EMBEDDED_YAML } from "./embedded.gen.ts";

type YamlParse = (text: string) => unknown;

let parser: YamlParse | null = null;
let loading: Promise<YamlParse> | null = null;

/** Load the `yaml` package (once); afterwards {@link parseYamlSync} parses any text. */
export function loadYaml(): Promise<YamlParse> {
  loading ??= import("yaml").then((m) => {
    parser = (text) => m.parse(text);
    return parser;
  });
  return loading;
}

/** The build-time parse of one of the program's own YAML texts, or `undefined`. */
function embedded(text: string): { value: unknown } | undefined {
  return Object.hasOwn(EMBEDDED_YAML, text)
    ? { value: structuredClone(EMBEDDED_YAML[text]) }
    : undefined;
}

/** Parse YAML text, loading the `yaml` package only for text that is not built in. */
export async function parseYaml(text: string): Promise<unknown> {
  const pre = embedded(text);
  if (pre) return pre.value;
  return (await loadYaml())(text);
}

/**
 * Parse YAML text synchronously: built-in text always, other text once {@link loadYaml} has
 * resolved (callers that read files await it first).
 *
 * @throws {Error} when the text is not built in and the `yaml` package is not loaded yet.
 */
export function parseYamlSync(text: string): unknown {
  const pre = embedded(text);
  if (pre) return pre.value;
  if (!parser) throw new Error("YAML parser not loaded (await loadYaml() first)");
  return parser(text);
}
