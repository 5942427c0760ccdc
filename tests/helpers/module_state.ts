/**
 * Finding mutable module-level state in TypeScript sources (the run state that must belong to
 * a session, not to the process): a top-level `let`/`var`, a top-level `const` holding a
 * `Map`/`Set`/`WeakMap`/`WeakSet`, array or object literal that the program mutates, a
 * top-level instance of a class other than a few stateless ones, a mutable `static` class
 * field, and any write to `globalThis`.
 *
 * The scan works on the source with comments and string/template contents blanked out (line
 * breaks kept), tracks brace depth to know what is top level, and judges mutation by the
 * mutating calls and assignments made on a name in its own module or in a module importing it.
 *
 * @module
 */
import { join, relative } from "node:path";

/** One piece of module-level state found. */
export interface ModuleStateFinding {
  /** Repository-relative path of the module. */
  readonly file: string;
  /** The name declared (or `globalThis` for a global write). */
  readonly name: string;
  /** 1-based line of the declaration or write. */
  readonly line: number;
  /** What was found, e.g. `top-level let`, `mutated Map`, `globalThis write`. */
  readonly kind: string;
}

/** Classes whose instances hold no state worth a session (safe at module level). */
const STATELESS_CLASSES: ReadonlySet<string> = new Set([
  "TextEncoder",
  "TextDecoder",
  "Intl.Segmenter",
  "Intl.Collator",
  "Intl.NumberFormat",
  "Intl.DateTimeFormat",
  "URL",
  "RegExp",
]);

/**
 * The source with comments and the contents of strings and templates replaced by spaces;
 * `${...}` substitutions inside templates stay code. Line breaks are kept, so offsets and line
 * numbers match the original.
 */
export function blankNonCode(source: string): string {
  const out = source.split("");
  const blank = (i: number) => {
    if (out[i] !== "\n") out[i] = " ";
  };
  // Stack of contexts: "code" (with the brace depth at which a template substitution ends),
  // or "template".
  const stack: ({ kind: "code"; depth: number } | { kind: "template" })[] = [
    { kind: "code", depth: 0 },
  ];
  let i = 0;
  const n = source.length;
  while (i < n) {
    const top = stack[stack.length - 1];
    const c = source[i];
    if (top.kind === "template") {
      if (c === "\\") {
        blank(i);
        if (i + 1 < n) blank(i + 1);
        i += 2;
      } else if (c === "`") {
        stack.pop();
        i++;
      } else if (c === "$" && source[i + 1] === "{") {
        stack.push({ kind: "code", depth: 0 });
        i += 2;
      } else {
        blank(i);
        i++;
      }
      continue;
    }
    if (c === "/" && source[i + 1] === "/") {
      while (i < n && source[i] !== "\n") blank(i++);
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? n : end + 2;
      while (i < stop) blank(i++);
    } else if (c === '"' || c === "'") {
      i++;
      while (i < n && source[i] !== c && source[i] !== "\n") {
        if (source[i] === "\\") blank(i++);
        blank(i++);
      }
      i++;
    } else if (c === "`") {
      stack.push({ kind: "template" });
      i++;
    } else if (c === "/" && isRegexStart(source, i)) {
      i++;
      let inClass = false;
      while (i < n && source[i] !== "\n" && (inClass || source[i] !== "/")) {
        if (source[i] === "\\") blank(i++);
        else if (source[i] === "[") inClass = true;
        else if (source[i] === "]") inClass = false;
        blank(i++);
      }
      i++;
    } else if (c === "{") {
      top.depth++;
      i++;
    } else if (c === "}") {
      if (top.depth === 0 && stack.length > 1) stack.pop(); // end of a `${...}`
      else top.depth--;
      i++;
    } else i++;
  }
  return out.join("");
}

/** Whether a `/` at `i` starts a regular expression literal (judged by what precedes it). */
function isRegexStart(source: string, i: number): boolean {
  let j = i - 1;
  while (j >= 0 && (source[j] === " " || source[j] === "\t")) j--;
  if (j < 0) return true;
  const prev = source[j];
  if (/[(,=:[!&|?{};+\-*%<>~^\n]/.test(prev)) return true;
  const word = /[A-Za-z_$]+$/.exec(source.slice(Math.max(0, j - 10), j + 1))?.[0];
  return word !== undefined && ["return", "typeof", "case", "in", "of", "void"].includes(word);
}

/** The 1-based line of an offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text[i] === "\n") line++;
  return line;
}

/** Offsets of the lines that start at brace depth 0 (top-level statements). */
function topLevelLines(code: string): { offset: number; text: string }[] {
  const out: { offset: number; text: string }[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= code.length; i++) {
    if (i === code.length || code[i] === "\n") {
      if (depth === 0) out.push({ offset: start, text: code.slice(start, i) });
      start = i + 1;
      continue;
    }
    const c = code[i];
    if (c === "{" || c === "(" || c === "[") depth++;
    else if (c === "}" || c === ")" || c === "]") depth--;
  }
  return out;
}

const ESCAPE = /[.*+?^${}()|[\]\\]/g;

/** Whether `code` mutates the binding `name` (calls a mutating method, assigns into it). */
export function mutates(code: string, name: string): boolean {
  const n = name.replace(ESCAPE, "\\$&");
  const path = `(?:\\??\\.[A-Za-z_$][\\w$]*|\\[[^\\]\\n]*\\])`;
  const method = new RegExp(
    `(?<![\\w$.])${n}${path}*\\.(?:set|add|delete|clear|push|pop|shift|unshift|splice|sort|reverse|fill|copyWithin)\\(`,
  );
  const assign = new RegExp(
    `(?<![\\w$.])${n}${path}+\\s*(?:=(?!=)|\\+=|-=|\\*=|/=|\\?\\?=|\\|\\|=|&&=|\\+\\+|--)`,
  );
  const other = new RegExp(
    `(?:Object\\.(?:assign|defineProperty|defineProperties|setPrototypeOf)|Reflect\\.(?:set|defineProperty|deleteProperty))\\(\\s*${n}\\b|\\bdelete\\s+${n}\\b`,
  );
  return method.test(code) || assign.test(code) || other.test(code);
}

/** Writes to `globalThis` anywhere in `code` (blanked source). */
function globalWrites(code: string): number[] {
  // `(globalThis as T)` reads like `globalThis`.
  const plain = code.replace(
    /\(\s*globalThis\s+as\s+[^()]*\)/g,
    (m) => "globalThis".padEnd(m.length),
  );
  const res = [
    /\bglobalThis\s*(?:\??\.[A-Za-z_$][\w$]*|\[[^\]\n]*\])+\s*(?:=(?!=)|\+=|-=|\?\?=|\|\|=|&&=|\+\+|--)/g,
    /(?:Object\.(?:assign|defineProperty|defineProperties|setPrototypeOf)|Reflect\.(?:set|defineProperty|deleteProperty))\(\s*globalThis\b/g,
    /\bdelete\s+globalThis\b/g,
  ];
  const out: number[] = [];
  for (const re of res) for (const m of plain.matchAll(re)) out.push(m.index!);
  return out.sort((a, b) => a - b);
}

/** A top-level declaration: `const`/`let`/`var` and its name, on one line. */
const DECLARATION =
  /^(?:export\s+)?(const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::(?:=>|[^=])*?)?\s*(?:=(?!>)\s*(.*))?$/;

/** The names a module imports from `spec`s that end in `target` (its repository path). */
function importsOf(code: string, original: string): Map<string, Set<string>> {
  // Import clauses are code; their specifiers are strings (blanked): read them from the source.
  const out = new Map<string, Set<string>>();
  const re = /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*/g;
  for (const m of code.matchAll(re)) {
    const after = original.slice(m.index! + m[0].length);
    const spec = /^["']([^"']+)["']/.exec(after)?.[1];
    if (!spec) continue;
    const names = m[1].split(",").map((s) => s.trim().replace(/^type\s+/, ""))
      .map((s) => s.split(/\s+as\s+/)).filter((p) => p[0]);
    const set = out.get(spec) ?? new Set<string>();
    for (const p of names) set.add(`${p[0]}\u0000${p[1] ?? p[0]}`);
    out.set(spec, set);
  }
  return out;
}

/** One module's source, as the scan reads it. */
export interface ModuleSource {
  /** Repository-relative path. */
  readonly file: string;
  /** The text. */
  readonly source: string;
}

/** Every piece of mutable module-level state in `modules` (see the module doc). */
export function findModuleState(modules: readonly ModuleSource[]): ModuleStateFinding[] {
  const blanked = modules.map((m) => ({ ...m, code: blankNonCode(m.source) }));
  const findings: ModuleStateFinding[] = [];
  for (const m of blanked) {
    const add = (name: string, offset: number, kind: string) =>
      findings.push({ file: m.file, name, line: lineAt(m.code, offset), kind });
    // Modules that import from this one, with the local names they use.
    const importers = () =>
      blanked.flatMap((other) => {
        const out: { code: string; local: string; imported: string }[] = [];
        for (const [spec, names] of importsOf(other.code, other.source)) {
          if (!spec.startsWith(".")) continue;
          const target = join(other.file, "..", spec);
          if (target !== m.file) continue;
          for (const pair of names) {
            const [imported, local] = pair.split("\u0000");
            out.push({ code: other.code, local, imported });
          }
        }
        return out;
      });
    const lines = topLevelLines(m.code);
    for (const [i, { offset, text }] of lines.entries()) {
      const d = DECLARATION.exec(text.trimEnd());
      if (!d) continue;
      const [, keyword, name] = d;
      // `const X =` with the value on the next line
      let init = d[3] ?? "";
      if (init === "" && /=\s*$/.test(text)) init = lines[i + 1]?.text.trim() ?? "";
      if (keyword !== "const") {
        add(name, offset, `top-level ${keyword}`);
        continue;
      }
      const ctor = /^new\s+([A-Za-z_$][\w$.]*)/.exec(init)?.[1];
      const literal = /^(?:\[|\{)/.test(init) || /^new\s+(?:Map|Set|WeakMap|WeakSet)\b/.test(init);
      if (ctor && !literal && !STATELESS_CLASSES.has(ctor)) {
        add(name, offset, `top-level instance of ${ctor}`);
        continue;
      }
      if (!literal) continue;
      const what = ctor ?? (init.startsWith("[") ? "array" : "object");
      const mutated = mutates(m.code, name) ||
        importers().some((i) => i.imported === name && mutates(i.code, i.local));
      if (mutated) add(name, offset, `mutated ${what}`);
    }
    // Static class fields that are not readonly, or hold a mutated collection.
    for (
      const s of m.code.matchAll(
        /^\s+(?:(?:public|private|protected)\s+)?static\s+(readonly\s+)?(#?[A-Za-z_$][\w$]*)\s*(?::[^=;\n]*)?=/gm,
      )
    ) {
      const [, readonly, name] = s;
      const key = name.startsWith("#") ? name : `this.${name}`;
      if (!readonly || mutates(m.code, name) || mutates(m.code, key)) {
        add(name, s.index!, "mutable static field");
      }
    }
    for (const offset of globalWrites(m.code)) add("globalThis", offset, "globalThis write");
  }
  return findings;
}

/** The `.ts` modules below `roots` (directories) of `repo`, generated files included. */
export async function readModules(repo: string, roots: readonly string[]): Promise<ModuleSource[]> {
  const out: ModuleSource[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) await walk(path);
      else if (e.isFile && e.name.endsWith(".ts")) {
        out.push({ file: relative(repo, path), source: await Deno.readTextFile(path) });
      }
    }
  };
  for (const root of roots) await walk(join(repo, root));
  return out.sort((a, b) => a.file < b.file ? -1 : 1);
}
