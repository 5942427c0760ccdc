/**
 * Finds every `lazyImport(...)` and `lazyPackage(...)` call in the program's source, so the
 * bundle and the compiled binaries can list the modules Deno never sees statically (see
 * `lib/lazy_import.ts`), and a test can fail when the list in `scripts/lazy_modules.ts` misses one.
 *
 * @module
 */

/** Absolute path of the repository root, with a trailing slash. */
export const REPO_ROOT_URL: URL = new URL("../", import.meta.url);

/** One lazy import call found in the source. */
export interface LazyCall {
  /** `lazyImport` (a module of this program) or `lazyPackage` (an import-map package). */
  kind: "module" | "package";
  /** Repository-relative path of the file holding the call. */
  file: string;
  /** 1-based line of the call. */
  line: number;
  /** The string literal passed as the specifier, or `null` when it is not a literal. */
  specifier: string | null;
  /**
   * For `module` calls: the repository-relative path the specifier resolves to. For `package`
   * calls: the package name. `null` when the specifier is not a literal.
   */
  target: string | null;
  /** For `module` calls: whether the base argument is exactly `import.meta.url`. */
  baseIsImportMetaUrl: boolean;
  /** Offset of that `import.meta.url` in the source, when it is one. */
  baseOffset: number | null;
}

/** Directories (and root files) that hold the program's own source. */
export const SOURCE_ROOTS: readonly string[] = ["main.ts", "mod.ts", "lib", "tools", "scripts"];

function skipTypeArgs(src: string, i: number): number {
  // `i` points just after the identifier; skip whitespace and a balanced `<...>`.
  let j = i;
  while (/\s/.test(src[j] ?? "")) j++;
  if (src[j] !== "<") return j;
  let depth = 0;
  for (; j < src.length; j++) {
    const c = src[j];
    if (c === "<") depth++;
    else if (c === ">" && src[j - 1] !== "=") {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return j;
}

function readStringLiteral(src: string, i: number): { value: string; end: number } | null {
  const q = src[i];
  if (q !== '"' && q !== "'") return null;
  const end = src.indexOf(q, i + 1);
  if (end < 0) return null;
  const value = src.slice(i + 1, end);
  return value.includes("\\") || value.includes("\n") ? null : { value, end: end + 1 };
}

/** The lazy calls in one file's source text. `file` is repository-relative. */
export function scanSource(file: string, src: string): LazyCall[] {
  const calls: LazyCall[] = [];
  const re = /\blazy(Import|Package)\b/g;
  for (let m = re.exec(src); m !== null; m = re.exec(src)) {
    // Skip the definitions (`function lazyImport<T>(...)`).
    if (/function\s+$/.test(src.slice(Math.max(0, m.index - 12), m.index))) continue;
    const lineStart = src.lastIndexOf("\n", m.index) + 1;
    const linePrefix = src.slice(lineStart, m.index);
    if (/^\s*(\*|\/\/)/.test(linePrefix) || /`[^`]*$/.test(linePrefix)) continue;
    let i = skipTypeArgs(src, m.index + m[0].length);
    if (src[i] !== "(") continue;
    i++;
    while (/\s/.test(src[i] ?? "")) i++;
    const lit = readStringLiteral(src, i);
    const kind = m[1] === "Import" ? "module" : "package";
    const line = src.slice(0, m.index).split("\n").length;
    let baseIsImportMetaUrl = false;
    let baseOffset: number | null = null;
    let target: string | null = null;
    if (lit) {
      const rest = src.slice(lit.end);
      const base = /^(\s*,\s*)import\.meta\.url\s*[,)]/.exec(rest);
      baseIsImportMetaUrl = base !== null;
      if (base) baseOffset = lit.end + base[1].length;
      if (kind === "package") target = lit.value;
      else {
        const url = new URL(lit.value, new URL(file, REPO_ROOT_URL));
        target = url.href.startsWith(REPO_ROOT_URL.href)
          ? url.href.slice(REPO_ROOT_URL.href.length)
          : url.href;
      }
    }
    calls.push({
      kind,
      file,
      line,
      specifier: lit?.value ?? null,
      target,
      baseIsImportMetaUrl,
      baseOffset,
    });
  }
  return calls;
}

async function* walk(dir: URL, rel: string): AsyncGenerator<string> {
  const entries = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory) yield* walk(new URL(`${e.name}/`, dir), r);
    else if (e.isFile && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) yield r;
  }
}

/** Every lazy call in the program's source (`SOURCE_ROOTS`), except `lib/lazy_import.ts` itself. */
export async function scanRepository(root: URL = REPO_ROOT_URL): Promise<LazyCall[]> {
  const calls: LazyCall[] = [];
  for (const entry of SOURCE_ROOTS) {
    const files = entry.endsWith(".ts") ? [entry] : await Array.fromAsync(
      walk(new URL(`${entry}/`, root), entry),
    );
    for (const file of files) {
      if (file === "lib/lazy_import.ts" || file === "scripts/lazy_scan.ts") continue;
      const src = await Deno.readTextFile(new URL(file, root));
      calls.push(...scanSource(file, src));
    }
  }
  return calls;
}

/**
 * Problems with a lazy-module list against the calls found in the source: a specifier that is
 * not a string literal, a `lazyImport` base other than `import.meta.url` (the bundle rewrites
 * exactly that), a lazily imported module or package missing from the list, and a list entry
 * that nothing imports lazily any more.
 */
export function lazyListProblemsOf(
  calls: readonly LazyCall[],
  modules: readonly string[],
  packages: readonly string[],
): string[] {
  const problems: string[] = [];
  const moduleSet = new Set(modules);
  const packageSet = new Set(packages);
  for (const c of calls) {
    const at = `${c.file}:${c.line}`;
    if (c.target === null) {
      problems.push(`${at}: the specifier of a lazy import must be a string literal`);
    } else if (c.kind === "module" && !c.baseIsImportMetaUrl) {
      problems.push(`${at}: the base of lazyImport must be \`import.meta.url\``);
    } else if (c.kind === "module" && !moduleSet.has(c.target)) {
      problems.push(`${at}: ${c.target} is imported lazily but missing from LAZY_MODULES`);
    } else if (c.kind === "package" && !packageSet.has(c.target)) {
      problems.push(`${at}: ${c.target} is imported lazily but missing from LAZY_PACKAGES`);
    }
  }
  const used = new Set(calls.map((c) => `${c.kind}:${c.target}`));
  for (const m of modules) {
    if (!used.has(`module:${m}`)) {
      problems.push(`LAZY_MODULES lists ${m}, which nothing imports lazily`);
    }
  }
  for (const p of packages) {
    if (!used.has(`package:${p}`)) {
      problems.push(`LAZY_PACKAGES lists ${p}, which nothing imports lazily`);
    }
  }
  return problems;
}
