/**
 * Parsing a Shell command line into what approval rules are checked against: every simple
 * command it runs (in pipelines, `&&`/`||`/`;` chains, subshells, blocks, loops, function
 * bodies, command and process substitutions) and every file it writes through a redirection.
 *
 * The parser is tree-sitter's bash grammar (`@vscode/tree-sitter-wasm`), loaded on first use.
 * A line that does not parse cleanly is reported as such and is never auto-allowed.
 *
 * @module
 */
import { unwrapCommand } from "./shell_wrappers.ts";

/** The parts of a tree-sitter syntax node used here (typed locally: the package is lazy). */
interface SyntaxNode {
  readonly type: string;
  readonly text: string;
  readonly isNamed: boolean;
  readonly startIndex: number;
  readonly endIndex: number;
  readonly hasError: boolean;
  readonly parent: SyntaxNode | null;
  readonly namedChildCount: number;
  readonly namedChildren: (SyntaxNode | null)[];
  readonly children: (SyntaxNode | null)[];
  childForFieldName(name: string): SyntaxNode | null;
}

/** A parsed tree. */
interface SyntaxTree {
  readonly rootNode: SyntaxNode;
  delete(): void;
}

/** The parts of `@vscode/tree-sitter-wasm` used here. */
interface TreeSitterModule {
  Parser: {
    init(opts: {
      locateFile(name: string, dir: string): string;
      wasmBinary?: Uint8Array;
    }): Promise<void>;
    new (): { setLanguage(lang: unknown): void; parse(text: string): SyntaxTree | null };
  };
  Language: { load(bytes: Uint8Array): Promise<unknown> };
}

/** One simple command of a line. */
export interface ShellCommand {
  /** The command's words (assignments first) with quotes removed, joined by single spaces. */
  text: string;
  /** The words with quotes removed; a word with an expansion keeps its source text. */
  words: string[];
  /** Whether any word depends on an expansion (`$x`, `$(...)`, globs are not expansions). */
  dynamic: boolean;
  /** Whether the command name itself is an expansion (nothing can be said about it). */
  dynamicName: boolean;
}

/** A file the line writes through a redirection (`>`, `>>`, `&>`, `>|`). */
export interface ShellWrite {
  /** The target as written (quotes removed); null when it depends on an expansion. */
  path: string | null;
  /** Source text of the redirection target. */
  source: string;
}

/** A parsed line. */
export type ParsedShellLine =
  | {
    ok: true;
    /** The commands the line runs. */
    commands: ShellCommand[];
    /** The files it writes through redirections. */
    writes: ShellWrite[];
    /**
     * Commands run by wrapper commands of the line (`sudo rm x` runs `rm x`, `bash -c "..."`
     * runs its code): deny and ask rules apply to them too.
     */
    inner: ShellCommand[];
    /** Writes of the code run by `bash -c` / `eval`. */
    innerWrites: ShellWrite[];
  }
  | { ok: false; reason: string };

/** How deep `bash -c "bash -c ..."` is followed. */
const MAX_NESTING = 4;

interface BashParser {
  parse(text: string): SyntaxTree | null;
}

let parserPromise: Promise<BashParser> | null = null;

/**
 * The module `scripts/bundle.ts` writes beside the bundle's chunks with tree-sitter's wasm
 * files in it (base64 by file name): a bundle has no package directories to read them from.
 */
export const BUNDLED_WASM_MODULE = "tree_sitter_wasm.files.js";

/**
 * A wasm file of `@vscode/tree-sitter-wasm`: its bytes when running from the bundle (the file
 * travels inside it, so it loads wherever the bundle does, `http(s)://` included, under the same
 * import permission); `null` when running from the source, where tree-sitter reads it from its
 * package directory itself.
 */
async function bundledWasm(file: string): Promise<Uint8Array | null> {
  if (!import.meta.url.endsWith(".js")) return null;
  // A computed specifier: the module exists only in the bundle.
  const mod = await import(new URL(BUNDLED_WASM_MODULE, import.meta.url).href);
  const b64: string | undefined = mod.files[file];
  if (b64 === undefined) throw new Error(`${file} is not in the bundle`);
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

/** Load tree-sitter and the bash grammar once. */
function loadParser(): Promise<BashParser> {
  parserPromise ??= (async () => {
    const ts = await import("@vscode/tree-sitter-wasm") as unknown as
      & TreeSitterModule
      & { default?: TreeSitterModule };
    const mod = ts.default ?? ts;
    // From the bundle the wasm files come with it; from the source, from the package directory.
    const [runtimeWasm, bashWasm] = await Promise.all([
      bundledWasm("tree-sitter.wasm"),
      bundledWasm("tree-sitter-bash.wasm"),
    ]);
    let wasmDir = "";
    await mod.Parser.init({
      ...(runtimeWasm ? { wasmBinary: runtimeWasm } : {}),
      locateFile(name: string, dir: string) {
        wasmDir = dir;
        return dir + name;
      },
    });
    const lang = await mod.Language.load(
      bashWasm ?? await Deno.readFile(wasmDir + "tree-sitter-bash.wasm"),
    );
    const parser = new mod.Parser();
    parser.setLanguage(lang);
    return parser;
  })();
  parserPromise.catch(() => (parserPromise = null));
  return parserPromise;
}

/** Redirection operators that write to the named file. */
const WRITE_OPERATORS = new Set([">", ">>", "&>", "&>>", ">|", ">&"]);
/** Targets a write to which changes no file. */
const HARMLESS_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"]);
/** Node types that are commands of their own. */
const COMMAND_TYPES = new Set([
  "command",
  "declaration_command",
  "unset_command",
  "variable_assignment",
  "variable_assignments",
]);
/** Node types whose text is an expansion (decided only when the line runs). */
const EXPANSION_TYPES = new Set([
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "brace_expression",
]);

function hasExpansion(node: SyntaxNode): boolean {
  if (EXPANSION_TYPES.has(node.type)) return true;
  return node.namedChildren.some((c) => c !== null && hasExpansion(c));
}

/** The literal value of a word node with quotes and escapes removed, or null when dynamic. */
function literalWord(node: SyntaxNode): string | null {
  if (hasExpansion(node)) return null;
  switch (node.type) {
    case "raw_string":
      return node.text.slice(1, -1);
    case "ansi_c_string":
      return null;
    case "string": {
      // "..." without expansions: the content between the quotes, with \" \\ \$ \` unescaped.
      return node.text.slice(1, -1).replace(/\\([\\"$`])/g, "$1").replace(/\\\n/g, "");
    }
    case "word":
    case "number":
    case "command_name":
    case "concatenation":
      return unquoteConcatenation(node);
    default:
      return node.text;
  }
}

function unquoteConcatenation(node: SyntaxNode): string | null {
  if (node.namedChildCount === 0) return node.text.replace(/\\(.)/gs, "$1");
  let out = "";
  let pos = node.startIndex;
  for (const child of node.namedChildren) {
    if (child === null) continue;
    out += node.text.slice(pos - node.startIndex, child.startIndex - node.startIndex)
      .replace(/\\(.)/gs, "$1");
    const part = literalWord(child);
    if (part === null) return null;
    out += part;
    pos = child.endIndex;
  }
  out += node.text.slice(pos - node.startIndex).replace(/\\(.)/gs, "$1");
  return out;
}

function assignmentWord(node: SyntaxNode): { word: string; dynamic: boolean } {
  const name = node.childForFieldName("name")?.text ?? "";
  const value = node.childForFieldName("value");
  const lit = value ? literalWord(value) : "";
  return { word: `${name}=${lit ?? value!.text}`, dynamic: lit === null };
}

function commandOf(node: SyntaxNode): ShellCommand {
  if (node.type === "variable_assignment") {
    const a = assignmentWord(node);
    return { text: a.word, words: [a.word], dynamic: a.dynamic, dynamicName: false };
  }
  if (node.type === "variable_assignments") {
    const parts = node.namedChildren.filter((c) => c?.type === "variable_assignment")
      .map((c) => assignmentWord(c!));
    const words = parts.map((p) => p.word);
    return {
      text: words.join(" "),
      words,
      dynamic: parts.some((p) => p.dynamic),
      dynamicName: false,
    };
  }
  const words: string[] = [];
  let dynamic = false;
  let dynamicName = false;
  for (const child of node.namedChildren) {
    if (child === null) continue;
    if (child.type === "file_redirect" || child.type.endsWith("_redirect")) continue;
    if (child.type === "variable_assignment") {
      const a = assignmentWord(child);
      dynamic ||= a.dynamic;
      words.push(a.word);
      continue;
    }
    const lit = literalWord(child);
    if (lit === null) {
      dynamic = true;
      if (child.type === "command_name") dynamicName = true;
    }
    words.push(lit ?? child.text);
  }
  if (node.type === "declaration_command" || node.type === "unset_command") {
    // `export X=1`: keep the keyword and the arguments as written.
    const text = node.text.replace(/\s+/g, " ").trim();
    return { text, words: text.split(" "), dynamic: hasExpansion(node), dynamicName: false };
  }
  return { text: words.join(" "), words, dynamic, dynamicName };
}

function writeOf(node: SyntaxNode): ShellWrite | null {
  if (node.type !== "file_redirect") return null;
  let op = "";
  for (const child of node.children) {
    if (child && !child.isNamed && /[<>]/.test(child.type)) op = child.type;
  }
  if (!WRITE_OPERATORS.has(op)) return null;
  const dest = node.childForFieldName("destination");
  if (!dest) return null;
  if (op === ">&" && /^(\d+|-)$/.test(dest.text)) return null; // fd duplication
  const path = literalWord(dest);
  if (path !== null && HARMLESS_TARGETS.has(path)) return null;
  return { path, source: dest.text };
}

function collect(node: SyntaxNode, out: { commands: ShellCommand[]; writes: ShellWrite[] }) {
  if (COMMAND_TYPES.has(node.type)) {
    const parent = node.parent;
    // An assignment that prefixes a command belongs to that command.
    const prefix = node.type === "variable_assignment" &&
      (parent?.type === "command" || parent?.type === "variable_assignments");
    const inDeclaration = parent?.type === "declaration_command";
    if (!prefix && !inDeclaration) out.commands.push(commandOf(node));
  }
  const w = writeOf(node);
  if (w) out.writes.push(w);
  for (const child of node.namedChildren) if (child !== null) collect(child, out);
}

/** Parse a command line. Never throws: failures come back as `{ ok: false, reason }`. */
export async function parseShellLine(line: string): Promise<ParsedShellLine> {
  let parser: BashParser;
  try {
    parser = await loadParser();
  } catch (err) {
    return {
      ok: false,
      reason: `the shell parser could not be loaded (${err instanceof Error ? err.message : err})`,
    };
  }
  const top = parseWith(parser, line);
  if (!top.ok) return top;
  const inner: ShellCommand[] = [];
  const innerWrites: ShellWrite[] = [];
  const unwrapAll = (commands: ShellCommand[], depth: number): string | null => {
    for (const cmd of commands) {
      let words = cmd.words;
      for (let hops = 0; hops < 8; hops++) {
        const u = unwrapCommand(words);
        if (u === null) break;
        if (u.kind === "command") {
          words = u.words;
          inner.push(commandFromWords(words, cmd.dynamic));
          continue;
        }
        if (depth >= MAX_NESTING) return "shell code is nested too deeply";
        const nested = parseWith(parser, u.text);
        if (!nested.ok) return `the code run by \`${words[0]}\` does not parse`;
        inner.push(...nested.commands);
        innerWrites.push(...nested.writes);
        const failed = unwrapAll(nested.commands, depth + 1);
        if (failed !== null) return failed;
        break;
      }
    }
    return null;
  };
  const failed = unwrapAll(top.commands, 1);
  if (failed !== null) return { ok: false, reason: failed };
  return { ...top, inner, innerWrites };
}

/** A command from the words a wrapper runs. */
function commandFromWords(words: string[], dynamic: boolean): ShellCommand {
  return { text: words.join(" "), words, dynamic, dynamicName: /[$`]/.test(words[0] ?? "") };
}

function parseWith(
  parser: BashParser,
  line: string,
): { ok: true; commands: ShellCommand[]; writes: ShellWrite[] } | { ok: false; reason: string } {
  let tree: SyntaxTree | null;
  try {
    tree = parser.parse(line);
  } catch (err) {
    return { ok: false, reason: `parse failed (${err instanceof Error ? err.message : err})` };
  }
  if (!tree) return { ok: false, reason: "parse failed" };
  try {
    const root = tree.rootNode;
    if (root.hasError) return { ok: false, reason: "the command line has a syntax error" };
    const out = { commands: [] as ShellCommand[], writes: [] as ShellWrite[] };
    collect(root, out);
    if (out.commands.length === 0 && line.trim()) {
      return { ok: false, reason: "no command found in the line" };
    }
    return { ok: true, ...out };
  } finally {
    tree.delete();
  }
}
