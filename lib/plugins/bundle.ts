/**
 * What enabled Kimi-TS bundles (`kimi.plugin.json`) bring to an agent build (reference
 * §B1): skill directories, agents (Markdown files with `name`/`description` frontmatter whose
 * body is the agent's system prompt; offered as subagent types below every other), MCP servers (named `plugin-<id>:<server>`, stdio
 * servers get `KIMI_CODE_HOME` and `KIMI_PLUGIN_ROOT`), a skill to load at session start (its
 * text goes into the new session's system prompt with the plugin's prompt text) and
 * system-prompt text (each plugin ≤ 32 KB, all together ≤ 64 KB). Installing never runs
 * plugin code; loading only reads files.
 *
 * @module
 */
import { dirname } from "node:path";
import { McpConfigError, type McpServers, parseMcpConfig } from "../mcp/config.ts";
import { loadYaml } from "../assets/yaml.ts";
import {
  fallbackDescription,
  NO_DESCRIPTION,
  parseFrontmatter,
  splitFrontmatter,
} from "../skills/skill.ts";
import {
  bundlePath,
  MAX_PLUGIN_PROMPT_BYTES,
  MAX_TOTAL_PROMPT_BYTES,
  readBundleManifest,
} from "./bundle_manifest.ts";

/** A plugin directory to load as a bundle. */
export interface BundleDir {
  /** Plugin name. */
  readonly name: string;
  /** Installed directory. */
  readonly dir: string;
}

/** An agent of a bundle: a subagent type with its own system prompt. */
export interface BundleAgent {
  /** Plugin name. */
  readonly plugin: string;
  /** Type name (frontmatter `name`, else the file name without `.md`). */
  readonly name: string;
  /** When to use it (frontmatter `description`, else the first body line). */
  readonly description: string;
  /** The system prompt (the file's body). */
  readonly prompt: string;
  /** The file. */
  readonly file: string;
}

/** What the enabled bundles bring. */
export interface LoadedBundles {
  /** Skill directories (searched like `extra_skill_dirs`), in plugin order. */
  readonly skillDirs: string[];
  /** Agents (subagent types), in plugin order. */
  readonly agents: BundleAgent[];
  /** MCP servers, by runtime name `plugin-<id>:<server>`. */
  readonly mcpServers: McpServers;
  /** System-prompt sections, one per plugin that has prompt text. */
  readonly promptSections: { plugin: string; text: string }[];
  /** Problems found (the part concerned is left out). */
  readonly warnings: string[];
}

const utf8 = new TextEncoder();

/** Load what the bundles in `dirs` bring. Never throws. */
export async function loadBundles(dirs: readonly BundleDir[]): Promise<LoadedBundles> {
  const out: LoadedBundles = {
    skillDirs: [],
    agents: [],
    mcpServers: {},
    promptSections: [],
    warnings: [],
  };
  let promptBytes = 0;
  for (const b of dirs) {
    const warn = (m: string) => out.warnings.push(`Plugin '${b.name}': ${m}`);
    let m;
    try {
      m = await readBundleManifest(b.dir);
    } catch (err) {
      warn((err as Error).message);
      continue;
    }
    const paths = async (field: string, v: string | string[] | undefined, dflt: string) => {
      const list = v === undefined ? [dflt] : Array.isArray(v) ? v : [v];
      const found: string[] = [];
      for (const p of list) {
        const abs = await bundlePath(b.dir, p);
        if (abs === null) {
          if (v !== undefined) warn(`${field} path "${p}" must start with ./ and stay inside it`);
          continue;
        }
        found.push(abs);
      }
      return found;
    };
    const skillDirs = await paths("skills", m.skills, "./skills");
    out.skillDirs.push(...skillDirs);
    for (const agentsDir of await paths("agents", m.agents, "./agents")) {
      out.agents.push(...await readAgents(m.name, agentsDir, warn));
    }
    for (const [server, raw] of Object.entries(m.mcpServers)) {
      const cfg = await bundleServer(b.dir, raw, warn, server);
      if (cfg === null) continue;
      try {
        const name = `plugin-${m.name}:${server}`;
        Object.assign(
          out.mcpServers,
          parseMcpConfig(JSON.stringify({ mcpServers: { [name]: cfg } }), { inline: 0 }),
        );
      } catch (err) {
        warn(
          `MCP server "${server}": ${err instanceof McpConfigError ? err.message : String(err)}`,
        );
      }
    }
    let text = m.systemPrompt ?? "";
    if (m.systemPromptPath) {
      const file = await bundlePath(b.dir, m.systemPromptPath);
      if (file === null) warn(`systemPromptPath "${m.systemPromptPath}" is outside the plugin`);
      else {
        try {
          text += (text ? "\n\n" : "") + await Deno.readTextFile(file);
        } catch (err) {
          warn(`cannot read systemPromptPath: ${(err as Error).message}`);
        }
      }
    }
    if (m.sessionStart?.skill) {
      const skill = m.sessionStart.skill;
      const body = await startupSkillText(skillDirs, skill);
      if (body === null) warn(`sessionStart skill "${skill}" is not one of the plugin's skills`);
      else text += `${text ? "\n\n" : ""}Startup skill \`${skill}\`:\n\n${body}`;
    }
    if (text) {
      const size = utf8.encode(text).length;
      if (size > MAX_PLUGIN_PROMPT_BYTES) {
        warn(`system prompt text is ${size} bytes, more than ${MAX_PLUGIN_PROMPT_BYTES}; left out`);
      } else if (promptBytes + size > MAX_TOTAL_PROMPT_BYTES) {
        warn(
          `system prompt text left out: all plugins together may add at most ` +
            `${MAX_TOTAL_PROMPT_BYTES} bytes`,
        );
      } else {
        promptBytes += size;
        out.promptSections.push({ plugin: m.name, text });
      }
    }
    for (const w of m.warnings) warn(w);
  }
  return out;
}

async function bundleServer(
  root: string,
  raw: Record<string, unknown>,
  warn: (m: string) => void,
  server: string,
): Promise<Record<string, unknown> | null> {
  if (typeof raw.url === "string") return raw;
  if (typeof raw.command !== "string") {
    warn(`MCP server "${server}" has neither a command nor a url`);
    return null;
  }
  const cfg: Record<string, unknown> = { ...raw };
  if (raw.command.startsWith("./")) {
    const cmd = await bundlePath(root, raw.command);
    if (cmd === null) {
      warn(`MCP server "${server}": command ${raw.command} is not inside the plugin`);
      return null;
    }
    cfg.command = cmd;
  }
  const cwd = typeof raw.cwd === "string" ? await bundlePath(root, raw.cwd) : root;
  if (cwd === null) {
    warn(`MCP server "${server}": cwd ${raw.cwd} must start with ./ and stay inside the plugin`);
    return null;
  }
  cfg.cwd = cwd;
  const env = (raw.env ?? {}) as Record<string, string>;
  cfg.env = { ...env, KIMI_PLUGIN_ROOT: root, KIMI_CODE_HOME: dirname(dirname(root)) };
  // relative args like "./server.js" name files of the plugin
  if (Array.isArray(raw.args)) {
    cfg.args = await Promise.all(
      raw.args.map(async (a) =>
        typeof a === "string" && a.startsWith("./") ? (await bundlePath(root, a)) ?? a : a
      ),
    );
  }
  return cfg;
}

/** The system-prompt block of the bundles' sections (empty string when none). */
export function pluginPromptSections(sections: LoadedBundles["promptSections"]): string {
  if (sections.length === 0) return "";
  return sections.map((s) => `# Plugin: ${s.plugin}\n\n${s.text.trim()}`).join("\n\n");
}

/** The text of skill `name` (its `SKILL.md`) in one of `dirs`, or null. */
async function startupSkillText(dirs: readonly string[], name: string): Promise<string | null> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) return null;
  for (const dir of dirs) {
    const text = await Deno.readTextFile(`${dir}/${name}/SKILL.md`).catch(() => null);
    if (text !== null) return text.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n?/, "").trim();
  }
  return null;
}

/** The Markdown agents of one directory (sorted by file name). */
async function readAgents(
  plugin: string,
  dir: string,
  warn: (m: string) => void,
): Promise<BundleAgent[]> {
  const files: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".md")) files.push(e.name);
    }
  } catch {
    return [];
  }
  if (files.length === 0) return [];
  await loadYaml();
  const out: BundleAgent[] = [];
  for (const f of files.sort()) {
    const file = `${dir}/${f}`;
    try {
      const text = await Deno.readTextFile(file);
      if (utf8.encode(text).length > MAX_PLUGIN_PROMPT_BYTES) {
        warn(`agent ${f} is larger than ${MAX_PLUGIN_PROMPT_BYTES} bytes; left out`);
        continue;
      }
      const fm = parseFrontmatter(text);
      const name = typeof fm.name === "string" && fm.name ? fm.name : f.slice(0, -3);
      const description = typeof fm.description === "string" && fm.description
        ? fm.description
        : fallbackDescription(text) ?? NO_DESCRIPTION;
      const prompt = splitFrontmatter(text)[1].trim();
      if (!prompt) {
        warn(`agent ${f} has no body (its system prompt); left out`);
        continue;
      }
      out.push({ plugin, name, description, prompt, file });
    } catch (err) {
      warn(`agent ${f}: ${(err as Error).message}`);
    }
  }
  return out;
}
