/**
 * Reading the project's module graph from source text: static imports and re-exports, type-only
 * imports and literal dynamic `import("...")`; plus the checks the layering test applies to it
 * (forbidden edges, cycles).
 *
 * @module
 */

import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** One edge of the module graph: `from` imports `to` (both repository-relative paths). */
export interface ImportEdge {
  /** The importing module. */
  from: string;
  /** The imported module. */
  to: string;
  /** How it is imported. */
  kind: "static" | "dynamic";
}

/** A module graph: module path → the edges leaving it. */
export type ImportGraph = Map<string, ImportEdge[]>;

const STATIC_RE =
  /(?:^|[\s;}])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']/g;
const DYNAMIC_RE = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** `source` without its comment blocks and whole-line `//` comments (examples in JSDoc are not
 * imports). Comments that start mid-line are kept, so string contents like globs stay intact. */
export function stripComments(source: string): string {
  return source.replace(/^\s*\/\*[\s\S]*?\*\//gm, "").replace(/^\s*\/\/.*$/gm, "");
}

/** The relative specifiers one module's source text imports, by kind. */
export function importSpecifiers(text: string): { spec: string; kind: ImportEdge["kind"] }[] {
  const source = stripComments(text);
  const out: { spec: string; kind: ImportEdge["kind"] }[] = [];
  for (const m of source.matchAll(STATIC_RE)) out.push({ spec: m[1], kind: "static" });
  for (const m of source.matchAll(DYNAMIC_RE)) out.push({ spec: m[1], kind: "dynamic" });
  return out.filter((s) => s.spec.startsWith("./") || s.spec.startsWith("../"));
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    else if (entry.isFile && entry.name.endsWith(".ts")) yield path;
  }
}

/** Reads the graph of every `.ts` module under `roots` (directories or files) below `repo`. */
export async function readImportGraph(
  repo: string,
  roots: readonly string[],
): Promise<ImportGraph> {
  const graph: ImportGraph = new Map();
  for (const root of roots) {
    const abs = join(repo, root);
    const stat = await Deno.stat(abs);
    const files = stat.isDirectory ? walk(abs) : (async function* () {
      yield abs;
    })();
    for await (const file of files) {
      const from = relative(repo, file);
      const source = await Deno.readTextFile(file);
      const edges = importSpecifiers(source).map(({ spec, kind }) => ({
        from,
        to: relative(repo, resolve(dirname(file), spec)),
        kind,
      }));
      graph.set(from, edges);
    }
  }
  return graph;
}

/** The repository root (the directory holding deno.json). */
export const REPO_ROOT: string = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** A rule: no module matching `from` may import a module matching `to`. */
export interface LayerRule {
  /** What the rule forbids, for the failure message. */
  name: string;
  /** Importing modules the rule applies to. */
  from: RegExp;
  /** Imported modules that are forbidden to them. */
  to: RegExp;
}

/** Every edge in `graph` that breaks one of `rules`, as readable lines. */
export function forbiddenEdges(graph: ImportGraph, rules: readonly LayerRule[]): string[] {
  const out: string[] = [];
  for (const edges of graph.values()) {
    for (const e of edges) {
      for (const rule of rules) {
        if (rule.from.test(e.from) && rule.to.test(e.to)) {
          out.push(`${rule.name}: ${e.from} → ${e.to} (${e.kind})`);
        }
      }
    }
  }
  return out;
}

/** The import cycles in `graph` (strongly connected components of more than one module, or a
 * module importing itself), each as its sorted module list. */
export function importCycles(graph: ImportGraph): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const succ = (n: string) => (graph.get(n) ?? []).map((e) => e.to).filter((t) => graph.has(t));
  const strong = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of succ(v)) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || succ(v).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return cycles;
}
