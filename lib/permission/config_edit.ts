/**
 * Adding and removing `[[permission.rules]]` entries of a config file. TOML files are edited as
 * text so comments and formatting survive (a new entry is appended, a removed entry's block is
 * cut out); the result is parsed again and checked before it replaces the file atomically. When
 * the text cannot be edited safely (e.g. the rules are an inline array), the file is rewritten
 * from its parsed data. JSON files are rewritten from their parsed data.
 *
 * @module
 */
import { extname } from "node:path";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { atomicWriteText } from "../fs/atomic_write.ts";
import type { RuleDecision } from "./rules.ts";

/** A rule to write. */
export interface RuleEntry {
  /** `Tool(argument)` pattern. */
  pattern: string;
  /** Decision. */
  decision: RuleDecision;
}

type Doc = Record<string, unknown>;

async function readDoc(file: string): Promise<{ text: string; doc: Doc; json: boolean }> {
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const json = extname(file).toLowerCase() === ".json";
  const doc = (text.trim() ? (json ? JSON.parse(text) : parseToml(text)) : {}) as Doc;
  return { text, doc, json };
}

function rulesOf(doc: Doc): unknown[] {
  const perm = doc.permission;
  if (!perm || typeof perm !== "object" || Array.isArray(perm)) return [];
  const rules = (perm as Doc).rules;
  return Array.isArray(rules) ? rules : [];
}

function withRules(doc: Doc, rules: unknown[]): Doc {
  const perm =
    doc.permission && typeof doc.permission === "object" && !Array.isArray(doc.permission)
      ? doc.permission as Doc
      : {};
  return { ...doc, permission: { ...perm, rules } };
}

function tomlString(s: string): string {
  return JSON.stringify(s); // a JSON string is a valid TOML basic string
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object" && !(v instanceof Date)) {
    return Object.fromEntries(
      Object.keys(v).sort().map((k) => [k, canonical((v as Doc)[k])]),
    );
  }
  return v;
}

/** Whether an edited text parses to the wanted data (a missing rules list counts as empty). */
function sameData(parsed: Doc, wanted: Doc): boolean {
  const norm = (d: Doc) => JSON.stringify(canonical(withRules(d, rulesOf(d))));
  return norm(parsed) === norm(wanted);
}

async function writeDoc(
  file: string,
  opts: { json: boolean; text: string | null; doc: Doc },
): Promise<void> {
  const out = opts.text ??
    (opts.json ? JSON.stringify(opts.doc, null, 2) + "\n" : stringifyToml(opts.doc) + "\n");
  await atomicWriteText(file, out, { mode: 0o600 });
}

/** Append rules to a config file (created when missing). */
export async function appendRules(file: string, entries: readonly RuleEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const { text, doc, json } = await readDoc(file);
  const wanted = withRules(doc, [
    ...rulesOf(doc),
    ...entries.map((e) => ({ pattern: e.pattern, decision: e.decision })),
  ]);
  let edited: string | null = null;
  if (!json) {
    const block = entries.map((e) =>
      `[[permission.rules]]\npattern = ${tomlString(e.pattern)}\ndecision = ${
        tomlString(e.decision)
      }\n`
    ).join("\n");
    const sep = text === "" || text.endsWith("\n\n") ? "" : text.endsWith("\n") ? "\n" : "\n\n";
    const candidate = text + sep + block;
    try {
      if (sameData(parseToml(candidate) as Doc, wanted)) edited = candidate;
    } catch {
      // fall back to a rewrite
    }
  }
  await writeDoc(file, { json, text: edited, doc: wanted });
}

/**
 * Remove the `index`-th entry of `permission.rules` when it still has `pattern`; returns false
 * when the file no longer has that entry (changed behind us).
 */
export async function removeRule(file: string, index: number, pattern: string): Promise<boolean> {
  const { text, doc, json } = await readDoc(file);
  const rules = rulesOf(doc);
  const entry = rules[index] as Doc | undefined;
  if (!entry || entry.pattern !== pattern) return false;
  const wanted = withRules(doc, rules.filter((_, i) => i !== index));
  let edited: string | null = null;
  if (!json) {
    const lines = text.split("\n");
    const headers: number[] = [];
    lines.forEach((l, i) => {
      if (/^\s*\[\[\s*permission\s*\.\s*rules\s*\]\]/.test(l)) headers.push(i);
    });
    if (headers.length === rules.length) {
      const start = headers[index];
      let end = start + 1;
      while (end < lines.length && !/^\s*\[/.test(lines[end])) end++;
      // Keep trailing comments/blank lines that belong to what follows out of the cut.
      while (end > start + 1 && /^\s*(#.*)?$/.test(lines[end - 1]) && end < lines.length) end--;
      const candidate = [...lines.slice(0, start), ...lines.slice(end)].join("\n");
      try {
        if (sameData(parseToml(candidate) as Doc, wanted)) edited = candidate;
      } catch {
        // fall back to a rewrite
      }
    }
  }
  await writeDoc(file, { json, text: edited, doc: wanted });
  return true;
}
