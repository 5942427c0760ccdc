/**
 * Agent spec files (`agent.yaml`): schema, `extend` resolution and tool-list normalisation.
 *
 * ```yaml
 * version: 1
 * agent:
 *   extend: default            # a built-in agent name, or a path relative to this file
 *   name: my-agent
 *   system_prompt_path: ./system.md
 *   system_prompt_args: { ROLE_ADDITIONAL: "..." }
 *   model: null                # default model alias (subagent types)
 *   when_to_use: null
 *   tools: [Shell, ReadFile]   # our names or `kimi_cli.tools.shell:Shell`-style references
 *   allowed_tools: null        # when set, replaces `tools`
 *   exclude_tools: []          # removed from the effective list
 *   subagents: { coder: { path: ./coder.yaml, description: "..." } }
 * ```
 *
 * Every field present in a child overrides its base; `system_prompt_args` merge key by key;
 * paths resolve against the file that declares them. Built-in agents live under `agents/`
 * and are read from the embedded assets; their locations print as `builtin:agents/...`.
 *
 * @module
 */
import * as nodePath from "node:path";
import * as z from "zod";
import { hasAsset, listAssets, readAsset } from "../assets/mod.ts";
import { parseYaml } from "../assets/yaml.ts";
import { excerpt, looksBinary } from "../excerpt.ts";
import type { ControlPath } from "../tooling/control_paths.ts";
import { isSecretFile } from "../tooling/sensitive.ts";

/** The only spec version understood. */
export const AGENT_SPEC_VERSION = "1";

/** An agent spec that cannot be loaded; the message names the file and the cause. */
export class AgentSpecError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "AgentSpecError";
  }
}

/** One `subagents` entry as written in YAML. */
export const SubagentEntrySchema = z.object({
  /** Spec file of the subagent type, relative to the declaring file. */
  path: z.string(),
  /** What the type is good at (shown to the model). */
  description: z.string(),
});

/** The `agent` mapping as written in YAML (absent keys inherit from the base). */
export const AgentSectionSchema = z.object({
  extend: z.string().nullish(),
  name: z.string().optional(),
  system_prompt_path: z.string().optional(),
  system_prompt_args: z.record(z.string(), z.string()).nullish(),
  model: z.string().nullable().optional(),
  when_to_use: z.string().nullable().optional(),
  tools: z.array(z.string()).nullable().optional(),
  allowed_tools: z.array(z.string()).nullable().optional(),
  exclude_tools: z.array(z.string()).nullable().optional(),
  subagents: z.record(z.string(), SubagentEntrySchema).nullable().optional(),
});
/** The `agent` mapping as written in YAML. */
export type AgentSection = z.infer<typeof AgentSectionSchema>;

/** A whole agent spec file. */
export const AgentSpecFileSchema = z.object({
  version: z.union([z.string(), z.number()]).optional(),
  agent: AgentSectionSchema.nullish(),
});
/** A whole agent spec file. */
export type AgentSpecFile = z.infer<typeof AgentSpecFileSchema>;

/** A subagent type declared by a spec. */
export interface ResolvedSubagent {
  /** Load the subagent type's own resolved spec. */
  spec: () => Promise<ResolvedAgentSpec>;
  /** What the type is good at. */
  description: string;
}

/** A fully resolved agent spec. */
export interface ResolvedAgentSpec {
  /** Agent name ("" for the default agent). */
  name: string;
  /** System prompt template text and where it came from (used in errors). */
  systemPrompt: { template: string; source: string };
  /** Spec-defined prompt variables, merged along the `extend` chain. */
  systemPromptArgs: Record<string, string>;
  /**
   * Effective tool list: `(allowed_tools ?? tools) − exclude_tools`, normalised to our names
   * (custom module references stay as absolute paths or URLs), duplicates removed, in order.
   */
  tools: string[];
  /** Normalised `allowed_tools` (null when unset): the tool policy of a subagent type. */
  allowedTools: string[] | null;
  /** Normalised `exclude_tools`. */
  excludeTools: string[];
  /** Default model alias. */
  model: string | null;
  /** When the parent should pick this agent (subagent types). */
  whenToUse: string | null;
  /** Subagent types by name. */
  subagents: Record<string, ResolvedSubagent>;
  /** Where the spec came from: an absolute path or `builtin:agents/<...>.yaml`. */
  file: string;
}

/** Where to load a spec from: a built-in agent name or a file path. */
export type AgentSpecSource = { builtin: string } | { file: string };

// ---------------------------------------------------------------------------------------------
// Locations: files on disk or embedded built-in assets.

const BUILTIN_PREFIX = "builtin:";

type Location = { kind: "builtin"; asset: string } | { kind: "file"; path: string };

function display(loc: Location): string {
  return loc.kind === "builtin" ? `${BUILTIN_PREFIX}${loc.asset}` : loc.path;
}

function resolveRelative(base: Location, ref: string): Location {
  if (base.kind === "builtin") {
    const asset = nodePath.posix.normalize(
      nodePath.posix.join(nodePath.posix.dirname(base.asset), ref),
    );
    return { kind: "builtin", asset };
  }
  return { kind: "file", path: nodePath.resolve(nodePath.dirname(base.path), ref) };
}

/** Names of the built-in agents (`default`, `okabe`, ...). */
export function builtinAgentNames(): string[] {
  return listAssets("agents/")
    .map((p) => /^agents\/([^/]+)\/agent\.yaml$/.exec(p)?.[1])
    .filter((n): n is string => n !== undefined)
    .sort();
}

function builtinLocation(name: string): Location | null {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return null;
  const asset = `agents/${name}/agent.yaml`;
  return hasAsset(asset) ? { kind: "builtin", asset } : null;
}

async function readLocation(
  loc: Location,
  what: "spec" | "prompt",
  controls: readonly ControlPath[],
): Promise<string> {
  const shown = display(loc);
  const notFound = what === "spec"
    ? `Agent spec file not found: ${shown}`
    : `System prompt file not found: ${shown}`;
  if (loc.kind === "builtin") {
    if (!hasAsset(loc.asset)) throw new AgentSpecError(notFound);
    return readAsset(loc.asset);
  }
  if (isSecretFile(loc.path, controls)) {
    throw new AgentSpecError(
      `${what === "spec" ? "Agent spec" : "System prompt"} path leads to a file that holds ` +
        `secrets (kimi's configuration or credentials, a key, /proc): ${shown}. Refusing to ` +
        "read it.",
    );
  }
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(loc.path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new AgentSpecError(notFound);
    throw new AgentSpecError(`Cannot read ${shown}: ${(e as Error).message}`);
  }
  if (!info.isFile) {
    throw new AgentSpecError(
      what === "spec"
        ? `Agent spec path is not a file: ${shown}`
        : `System prompt path is not a file: ${shown}`,
    );
  }
  try {
    return await Deno.readTextFile(loc.path);
  } catch (e) {
    throw new AgentSpecError(`Cannot read ${shown}: ${(e as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Tool references.

/** Reference-style paths whose class name differs from our tool name. */
const LEGACY_TOOL_ALIASES: Readonly<Record<string, string>> = {
  "kimi_cli.tools.multiagent:Task": "Agent",
};

function isCustomToolRef(ref: string): boolean {
  return ref.endsWith(".ts") || ref.startsWith("./") || ref.startsWith("../") ||
    ref.startsWith("https://");
}

/**
 * Normalise one tool reference: `kimi_cli.tools.<module>:<Class>` becomes `<Class>`; a custom
 * module reference (ending in `.ts`, or starting with `./`, `../` or `https://`) becomes an
 * absolute path or URL resolved against the declaring file `base`; anything else (our own
 * names) is kept as written.
 */
export function normalizeToolRef(ref: string, base?: string): string {
  const trimmed = ref.trim();
  if (Object.hasOwn(LEGACY_TOOL_ALIASES, trimmed)) return LEGACY_TOOL_ALIASES[trimmed];
  if (isCustomToolRef(trimmed)) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return trimmed;
    if (base === undefined || base.startsWith(BUILTIN_PREFIX)) return trimmed;
    return nodePath.resolve(nodePath.dirname(base), trimmed);
  }
  const m = /^kimi_cli(?:\.[A-Za-z_][A-Za-z0-9_]*)*:([A-Za-z_][A-Za-z0-9_]*)$/.exec(trimmed);
  return m ? m[1] : trimmed;
}

function normalizeTools(refs: string[] | null | undefined, base: Location): string[] | null {
  if (refs === null || refs === undefined) return null;
  return refs.map((r) => normalizeToolRef(r, display(base)));
}

function dedupe(names: string[]): string[] {
  return [...new Set(names)];
}

// ---------------------------------------------------------------------------------------------
// Loading and merging.

/** A spec along the extend chain; `undefined` means "inherit". */
interface PartialSpec {
  name?: string;
  systemPromptPath?: Location;
  systemPromptArgs: Record<string, string>;
  model?: string | null;
  whenToUse?: string | null;
  tools?: string[] | null;
  allowedTools?: string[] | null;
  excludeTools?: string[] | null;
  subagents?: Record<string, { path: Location; description: string }> | null;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0].trim().replace(/:$/, "");
}

async function parseSpecText(text: string, loc: Location): Promise<AgentSection> {
  if (looksBinary(text)) {
    throw new AgentSpecError(
      `Agent spec file is not a text file (it holds binary data): ${display(loc)}`,
    );
  }
  let data: unknown;
  try {
    data = await parseYaml(text);
  } catch (e) {
    // The parser quotes the offending token whole: keep a short, escaped excerpt of it.
    throw new AgentSpecError(
      `Invalid YAML in agent spec file: ${excerpt(firstLine((e as Error).message))} (${
        display(loc)
      })`,
    );
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new AgentSpecError(`Agent spec file must contain a mapping: ${display(loc)}`);
  }
  const rawVersion = (data as Record<string, unknown>).version;
  const version = rawVersion === undefined || rawVersion === null
    ? AGENT_SPEC_VERSION
    : String(rawVersion);
  if (version !== AGENT_SPEC_VERSION) {
    throw new AgentSpecError(`Unsupported agent spec version: ${version}`);
  }
  const parsed = AgentSpecFileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length > 0 ? issue.path.join(".") : "(root)";
    throw new AgentSpecError(
      `Invalid agent spec file ${display(loc)}: ${where}: ${issue.message}`,
    );
  }
  return parsed.data.agent ?? {};
}

async function loadPartial(
  loc: Location,
  visited: Set<string>,
  controls: readonly ControlPath[],
): Promise<PartialSpec> {
  const key = display(loc);
  if (visited.has(key)) {
    throw new AgentSpecError(`Cyclic agent extend chain detected at ${key}`);
  }
  visited.add(key);
  const section = await parseSpecText(await readLocation(loc, "spec", controls), loc);

  const own: PartialSpec = {
    name: section.name,
    systemPromptPath: section.system_prompt_path === undefined
      ? undefined
      : resolveRelative(loc, section.system_prompt_path),
    systemPromptArgs: { ...(section.system_prompt_args ?? {}) },
    model: section.model,
    whenToUse: section.when_to_use,
    tools: section.tools === undefined ? undefined : normalizeTools(section.tools, loc),
    allowedTools: section.allowed_tools === undefined
      ? undefined
      : normalizeTools(section.allowed_tools, loc),
    excludeTools: section.exclude_tools === undefined
      ? undefined
      : normalizeTools(section.exclude_tools, loc),
    subagents: section.subagents === undefined
      ? undefined
      : section.subagents === null
      ? null
      : Object.fromEntries(
        Object.entries(section.subagents).map(([name, s]) => [
          name,
          { path: resolveRelative(loc, s.path), description: s.description },
        ]),
      ),
  };
  if (!section.extend) return own;

  const baseLoc = builtinLocation(section.extend) ?? resolveRelative(loc, section.extend);
  const base = await loadPartial(baseLoc, visited, controls);
  return {
    name: own.name ?? base.name,
    systemPromptPath: own.systemPromptPath ?? base.systemPromptPath,
    systemPromptArgs: { ...base.systemPromptArgs, ...own.systemPromptArgs },
    model: own.model !== undefined ? own.model : base.model,
    whenToUse: own.whenToUse !== undefined ? own.whenToUse : base.whenToUse,
    tools: own.tools !== undefined ? own.tools : base.tools,
    allowedTools: own.allowedTools !== undefined ? own.allowedTools : base.allowedTools,
    excludeTools: own.excludeTools !== undefined ? own.excludeTools : base.excludeTools,
    subagents: own.subagents !== undefined ? own.subagents : base.subagents,
  };
}

async function loadFromLocation(
  loc: Location,
  controls: readonly ControlPath[],
): Promise<ResolvedAgentSpec> {
  const spec = await loadPartial(loc, new Set(), controls);
  if (spec.name === undefined) throw new AgentSpecError("Agent name is required");
  if (spec.systemPromptPath === undefined) {
    throw new AgentSpecError("System prompt path is required");
  }
  if (spec.tools === undefined) throw new AgentSpecError("Tools are required");

  const allowedTools = spec.allowedTools ?? null;
  const excludeTools = spec.excludeTools ?? [];
  const excluded = new Set(excludeTools);
  const tools = dedupe((allowedTools ?? spec.tools ?? []).filter((t) => !excluded.has(t)));

  const subagents: Record<string, ResolvedSubagent> = {};
  for (const [name, entry] of Object.entries(spec.subagents ?? {})) {
    subagents[name] = {
      spec: () => loadFromLocation(entry.path, controls),
      description: entry.description,
    };
  }

  const template = await readLocation(spec.systemPromptPath, "prompt", controls);
  return {
    name: spec.name,
    systemPrompt: { template, source: display(spec.systemPromptPath) },
    systemPromptArgs: spec.systemPromptArgs,
    tools,
    allowedTools,
    excludeTools,
    model: spec.model ?? null,
    whenToUse: spec.whenToUse ?? null,
    subagents,
    file: display(loc),
  };
}

/**
 * Load and resolve an agent spec: a built-in agent by name, or a YAML file (relative paths
 * resolve against the current directory).
 *
 * @throws {AgentSpecError} when a file is missing or invalid, the version is unsupported, the
 * extend chain is cyclic, or a required field (name, system prompt path, tools) is missing
 * after resolution. A file that leads to a secret (a sensitive name, `/proc`, one of the
 * session's secret `controls`) is refused.
 */
export function loadAgentSpec(
  source: AgentSpecSource,
  controls: readonly ControlPath[] = [],
): Promise<ResolvedAgentSpec> {
  if ("builtin" in source) {
    const loc = builtinLocation(source.builtin);
    if (!loc) {
      return Promise.reject(
        new AgentSpecError(
          `Unknown built-in agent: ${source.builtin} (available: ${
            builtinAgentNames().join(", ")
          })`,
        ),
      );
    }
    return loadFromLocation(loc, controls);
  }
  return loadFromLocation({ kind: "file", path: nodePath.resolve(source.file) }, controls);
}

/**
 * The files of a resolved spec that configure what kimi runs later (the spec file, its system
 * prompt, its custom tool modules): control paths the agent may not change.
 */
export function agentControlPaths(spec: ResolvedAgentSpec): ControlPath[] {
  const files = [
    spec.file,
    spec.systemPrompt.source,
    ...spec.tools.filter((t) => t.startsWith("/")),
  ].filter((p) => p.startsWith("/"));
  return [...new Set(files)].map((path) => ({
    path,
    kind: "file",
    what: "a file of the agent in use (its spec, prompt or tool code)",
    secret: false,
  }));
}
