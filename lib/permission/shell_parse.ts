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
import { programName, quoteWord, type ShellWord, unwrapCommand } from "./shell_wrappers.ts";

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
  /**
   * The words as the shell reads them back (quoted where needed, dynamic words as written):
   * what allow rules and exact grants match, so word boundaries and quoting count.
   */
  exact: string;
  /** The words with quotes removed; a word with an expansion keeps its source text. */
  words: string[];
  /** For each word, whether it depends on an expansion (only known when the line runs). */
  wordDynamic: boolean[];
  /** For each word, whether it has unquoted glob characters (matched against files). */
  wordGlob: boolean[];
  /** How many leading words are assignments (`LC_ALL=C touch x`: 1). */
  assignments: number;
  /** Whether any word depends on an expansion (`$x`, `$(...)`, globs are not expansions). */
  dynamic: boolean;
  /** Whether the command name itself is only known when the line runs (expansion or glob). */
  dynamicName: boolean;
  /** Whether arguments only known when the line runs are appended (`xargs rm`). */
  dynamicTail: boolean;
  /** Why what this command runs cannot be seen in the line (`bash script.sh`), or null. */
  opaque: string | null;
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
    /**
     * Why what the line runs cannot be told from its text (an arithmetic expansion of a
     * variable the line sets, `PATH` rebound before a command, a dynamic command name): no
     * rule allows such a line, and every Shell deny rule refuses it.
     */
    hazards: string[];
    /**
     * Code run by a wrapper that the line does not show (`bash script.sh`, `… | sh`): every
     * Shell deny rule refuses the line; an allow rule of the wrapper itself still applies.
     */
    opaque: string[];
    /** The directories `cd`/`pushd` change to, in order; null when only known at run time. */
    cd: (string | null)[];
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

/**
 * Variables whose value changes what a later command runs or reads as code: the command search
 * path, the shell's start-up files and word splitting, the loader's and interpreters' preloads,
 * git's repository and configuration, pagers and editors programs start.
 */
const SENSITIVE_VARIABLE =
  /^(PATH|HOME|IFS|BASH_ENV|ENV|CDPATH|GLOBIGNORE|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|BASH_XTRACEFD|BASH_CMDS|BASH_ALIASES|BASH_LOADABLES_PATH|EXECIGNORE|FPATH|ZDOTDIR|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|TMPDIR|XDG_CONFIG_HOME|XDG_DATA_HOME|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|NODE_OPTIONS|NODE_PATH|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|SSH_ASKPASS|SUDO_ASKPASS|GIT_\w*|LD_\w*|DYLD_\w*|BASH_FUNC_\S*)$/;

/** Builtins whose arguments name variables (`a[$(cmd)]` there is evaluated). */
const NAME_BUILTINS = new Set([
  "unset",
  "read",
  "printf",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "mapfile",
  "readarray",
  "test",
  "[",
  "wait",
  "getopts",
  "let",
  "shift",
  "return",
  "exit",
]);

/** `[[ a OP b ]]` operators whose operands are evaluated as arithmetic. */
const ARITHMETIC_TEST_OPERATORS = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);

/** A value a variable may hold and still be harmless in arithmetic: an integer. */
const SAFE_ARITHMETIC_VALUE = /^\s*[-+]?\d*\s*$/;

function hasExpansion(node: SyntaxNode): boolean {
  if (EXPANSION_TYPES.has(node.type)) return true;
  return node.namedChildren.some((c) => c !== null && hasExpansion(c));
}

/** The value of an ANSI-C quoted string (`$'\x74ouch'` is `touch`). */
export function decodeAnsiC(body: string): string {
  const simple: Record<string, string> = {
    a: "\x07",
    b: "\b",
    e: "\x1b",
    E: "\x1b",
    f: "\f",
    n: "\n",
    r: "\r",
    t: "\t",
    v: "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
  };
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (_, esc: string) => {
      if (esc in simple) return simple[esc];
      if (/^[0-7]+$/.test(esc)) return String.fromCharCode(parseInt(esc, 8) & 0xff);
      if (/^[xuU]./.test(esc)) {
        const code = parseInt(esc.slice(1), 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : "";
      }
      if (esc[0] === "c" && esc.length === 2) {
        return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
      }
      return "\\" + esc;
    },
  );
}

/** The literal value of a word node with quotes and escapes removed, or null when dynamic. */
function literalWord(node: SyntaxNode): string | null {
  if (hasExpansion(node)) return null;
  switch (node.type) {
    case "raw_string":
      return node.text.slice(1, -1);
    case "ansi_c_string":
      return decodeAnsiC(node.text.slice(2, -1));
    case "translated_string":
    case "string": {
      // "..." without expansions: the content between the quotes, with \" \\ \$ \` unescaped.
      const text = node.text.startsWith("$") ? node.text.slice(1) : node.text;
      return text.slice(1, -1).replace(/\\([\\"$`])/g, "$1").replace(/\\\n/g, "");
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
    out += unescapeBare(
      node.text.slice(pos - node.startIndex, child.startIndex - node.startIndex),
    );
    const part = literalWord(child);
    if (part === null) return null;
    out += part;
    pos = child.endIndex;
  }
  out += unescapeBare(node.text.slice(pos - node.startIndex));
  return out;
}

/** Unquoted text between the parts of a word: escapes removed, a `$` before a quote dropped. */
function unescapeBare(text: string): string {
  return text.replace(/\$$/, "").replace(/\\(.)/gs, "$1");
}

/** Whether a word has glob characters outside quotes (`t?uch`, `*.md`, `/usr/bin/[t]ouch`). */
function hasUnquotedGlob(node: SyntaxNode): boolean {
  const bare = node.text
    .replace(/\\./gs, "")
    .replace(/\$?'(?:[^'\\]|\\.)*'/gs, "")
    .replace(/"(?:[^"\\]|\\.)*"/gs, "");
  return /[*?[]|[@!+]\(/.test(bare);
}

/** What the analysis of one parse gathers besides commands and writes. */
interface Analysis {
  commands: ShellCommand[];
  writes: ShellWrite[];
  /** Variables the line sets, and whether every value set is a plain integer. */
  assigned: Map<string, boolean>;
  /** Texts evaluated as arithmetic or expanded as prompts, with what they are. */
  contexts: { text: string; what: string }[];
  hazards: string[];
  cd: (string | null)[];
}

function assign(a: Analysis, name: string, safe: boolean, prefix: boolean) {
  a.assigned.set(name, (a.assigned.get(name) ?? true) && safe);
  if (SENSITIVE_VARIABLE.test(name) && !(prefix && name === "IFS")) {
    a.hazards.push(
      `the line sets \`${name}\`, which changes what later commands run or read`,
    );
  }
}

function assignmentWord(
  node: SyntaxNode,
): { word: string; exact: string; dynamic: boolean; name: string; safe: boolean } {
  const nameNode = node.childForFieldName("name");
  const name = nameNode?.type === "subscript"
    ? (nameNode.namedChildren[0]?.text ?? nameNode.text)
    : nameNode?.text ?? "";
  const value = node.childForFieldName("value");
  const op = node.text.slice(
    (nameNode?.endIndex ?? node.startIndex) - node.startIndex,
    value ? value.startIndex - node.startIndex : undefined,
  ).trim() || "=";
  const lit = value ? (value.type === "array" ? null : literalWord(value)) : "";
  const lhs = nameNode?.text ?? "";
  return {
    word: `${lhs}${op}${lit ?? value!.text}`,
    exact: `${lhs}${op}${lit === null ? value!.text : lit === "" ? "" : quoteWord(lit)}`,
    dynamic: lit === null,
    name,
    // An integer, or the result of an arithmetic expansion (always an integer).
    safe: (lit !== null && SAFE_ARITHMETIC_VALUE.test(lit)) ||
      value?.type === "arithmetic_expansion",
  };
}

function commandOf(node: SyntaxNode, a: Analysis): ShellCommand {
  const base = {
    wordGlob: [] as boolean[],
    dynamicTail: false,
    opaque: null,
    dynamicName: false,
  };
  if (node.type === "variable_assignment" || node.type === "variable_assignments") {
    const nodes = node.type === "variable_assignment"
      ? [node]
      : node.namedChildren.filter((c): c is SyntaxNode => c?.type === "variable_assignment");
    const parts = nodes.map(assignmentWord);
    for (const p of parts) assign(a, p.name, p.safe, false);
    return {
      ...base,
      text: parts.map((p) => p.word).join(" "),
      exact: parts.map((p) => p.exact).join(" "),
      words: parts.map((p) => p.word),
      wordDynamic: parts.map((p) => p.dynamic),
      wordGlob: parts.map(() => false),
      assignments: parts.length,
      dynamic: parts.some((p) => p.dynamic),
    };
  }
  if (node.type === "declaration_command" || node.type === "unset_command") {
    // `export X=1`: keep the keyword and the arguments as written.
    const text = node.text.replace(/\s+/g, " ").trim();
    const keyword = node.children[0]?.text ?? "";
    const options = node.namedChildren.filter((c) => c?.type === "word").map((c) => c!.text);
    if (options.some((o) => /^-\w*n/.test(o))) {
      a.hazards.push("a name reference (`declare -n`) sets variables the line does not name");
    }
    if (options.some((o) => /^-\w*i/.test(o))) {
      a.contexts.push({ text: node.text, what: "an integer variable's value" });
    }
    for (const child of node.namedChildren) {
      if (child === null) continue;
      if (child.type === "variable_assignment") {
        const p = assignmentWord(child);
        if (keyword !== "unset") assign(a, p.name, p.safe, false);
      }
      nameArgument(child.text, literalWord(child), a);
    }
    const words = text.split(" ");
    return {
      ...base,
      text,
      exact: text,
      words,
      wordDynamic: words.map((w) => /[$`]/.test(w)),
      wordGlob: words.map(() => false),
      assignments: 0,
      dynamic: hasExpansion(node),
    };
  }
  const words: string[] = [];
  const exact: string[] = [];
  const wordDynamic: boolean[] = [];
  const wordGlob: boolean[] = [];
  let assignments = 0;
  for (const child of commandParts(node)) {
    if (child.type === "variable_assignment") {
      const p = assignmentWord(child);
      assign(a, p.name, p.safe, true);
      words.push(p.word);
      exact.push(p.exact);
      wordDynamic.push(p.dynamic);
      wordGlob.push(false);
      assignments++;
      continue;
    }
    const lit = literalWord(child);
    const glob = lit !== null && hasUnquotedGlob(child);
    words.push(lit ?? child.text);
    wordDynamic.push(lit === null);
    wordGlob.push(glob);
    // Unquoted globs and tildes stay bare (the shell expands them); everything else is quoted
    // as needed, so the text reads back as the same words.
    const bare = (glob || (child.type === "word" && child.text.startsWith("~"))) &&
      /^[^\s'"\\$`;&|<>()]+$/.test(lit ?? "");
    exact.push(lit === null ? child.text : bare ? lit! : quoteWord(lit));
  }
  const nameIndex = assignments;
  // `/proc/self/exe` and `/dev/fd/3` are whatever program or file the process has open.
  const dynamicName = words.length > nameIndex &&
    (wordDynamic[nameIndex] || wordGlob[nameIndex] ||
      /^\/(proc|dev)\//.test(words[nameIndex]));
  const cmd: ShellCommand = {
    ...base,
    text: words.join(" "),
    exact: exact.join(" "),
    words,
    wordDynamic,
    wordGlob,
    assignments,
    dynamic: wordDynamic.some((d) => d),
    dynamicName,
  };
  analyseCommand(cmd, a);
  return cmd;
}

/** Node types that are one word of a command. */
const WORD_TYPES = new Set([
  "word",
  "string",
  "raw_string",
  "ansi_c_string",
  "translated_string",
  "concatenation",
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "brace_expression",
  "number",
]);

/**
 * The name, assignments and arguments of a command in source order. The grammar files words
 * that follow a redirection (`xargs < list rm`, `echo 2>err x y`, `cat <<EOF rm`) under the
 * redirection node, but bash passes them to the command: they are taken back from there.
 */
function commandParts(node: SyntaxNode): SyntaxNode[] {
  const parts: SyntaxNode[] = [];
  const redirects: SyntaxNode[] = [];
  for (const child of node.namedChildren) {
    if (child === null) continue;
    if (child.type.endsWith("_redirect")) redirects.push(child);
    else parts.push(child);
  }
  if (node.parent?.type === "redirected_statement") {
    for (const sibling of node.parent.namedChildren) {
      if (sibling !== null && sibling.type.endsWith("_redirect")) redirects.push(sibling);
    }
  }
  for (const r of redirects) {
    const words = r.namedChildren.filter((c): c is SyntaxNode =>
      c !== null && WORD_TYPES.has(c.type)
    );
    // A file or here-string redirection's first word is its target; the rest are arguments.
    parts.push(...(r.type === "heredoc_redirect" ? words : words.slice(1)));
  }
  return parts.sort((a, b) => a.startIndex - b.startIndex);
}

/** Variables a command sets, directories it changes to, texts it evaluates. */
function analyseCommand(cmd: ShellCommand, a: Analysis) {
  const at = cmd.assignments;
  if (cmd.words.length <= at || cmd.wordDynamic[at]) return;
  const program = programName(cmd.words[at]);
  const args = cmd.words.slice(at + 1);
  const dyn = cmd.wordDynamic.slice(at + 1);
  if (NAME_BUILTINS.has(program)) {
    args.forEach((w, i) => nameArgument(w, dyn[i] ? null : w, a));
  }
  switch (program) {
    case "cd":
    case "pushd": {
      const target = args.filter((w) => !/^-[LPe@]+$/.test(w));
      if (target.length === 0) a.cd.push("~");
      else if (target[0] === "-" || dyn[args.indexOf(target[0])]) a.cd.push(null);
      else a.cd.push(target[0]);
      break;
    }
    case "popd":
      a.cd.push(null);
      break;
    case "read": {
      for (let i = 0; i < args.length; i++) {
        if (args[i] === "-a") {
          assign(a, args[++i] ?? "", false, false);
        } else if (/^-[dinNptu]$/.test(args[i])) i++;
        else if (!args[i].startsWith("-")) assign(a, args[i].replace(/\[.*$/s, ""), false, false);
      }
      if (args.every((w) => w.startsWith("-"))) assign(a, "REPLY", false, false);
      break;
    }
    case "mapfile":
    case "readarray": {
      const names = args.filter((w, i) =>
        !w.startsWith("-") && !/^-[dnOsuCc]$/.test(args[i - 1] ?? "")
      );
      assign(a, names.at(-1) ?? "MAPFILE", false, false);
      break;
    }
    case "getopts":
      if (args[1] !== undefined) assign(a, args[1], false, false);
      assign(a, "OPTARG", false, false);
      break;
    case "printf": {
      const v = args.findIndex((w) => w === "-v");
      if (v >= 0 && args[v + 1] !== undefined) {
        assign(a, args[v + 1].replace(/\[.*$/s, ""), false, false);
      }
      break;
    }
    case "let":
      for (const w of args) a.contexts.push({ text: w, what: "a `let` expression" });
      break;
    case "set":
      // `set -- …` replaces the positional parameters (already never trusted).
      break;
  }
}

/** A builtin's name argument with a subscript: the subscript is evaluated (code in it runs). */
function nameArgument(source: string, literal: string | null, a: Analysis) {
  const open = source.indexOf("[");
  if (open < 0) return;
  const text = literal ?? source;
  const sub = text.slice(text.indexOf("[") >= 0 ? text.indexOf("[") : 0);
  if (/\$\(|`/.test(sub) && literal !== null) {
    a.hazards.push(`the subscript \`${sub}\` runs code when the shell evaluates it`);
    return;
  }
  a.contexts.push({ text: sub, what: "an array subscript" });
}

/** Texts the shell evaluates (arithmetic, subscripts, prompt expansion) below `node`. */
function noteContexts(node: SyntaxNode, a: Analysis) {
  switch (node.type) {
    case "arithmetic_expansion":
      a.contexts.push({ text: node.text, what: "an arithmetic expansion" });
      break;
    case "test_command":
      if (node.children[0]?.type === "((") {
        a.contexts.push({ text: node.text, what: "an arithmetic command" });
      }
      break;
    case "c_style_for_statement": {
      const body = node.namedChildren.find((c) => c?.type === "do_group");
      a.contexts.push({
        text: node.text.slice(0, body ? body.startIndex - node.startIndex : undefined),
        what: "an arithmetic `for` loop",
      });
      break;
    }
    case "subscript": {
      const open = node.children.findIndex((c) => c?.type === "[");
      const index = node.children.slice(open + 1, -1).map((c) => c?.text ?? "").join(" ");
      a.contexts.push({ text: index, what: "an array subscript" });
      break;
    }
    case "binary_expression": {
      const op = node.children.find((c) => c?.type === "test_operator");
      if (op && ARITHMETIC_TEST_OPERATORS.has(op.text) && insideDoubleBracket(node)) {
        a.contexts.push({ text: node.text, what: "a `[[ … ]]` arithmetic comparison" });
      }
      break;
    }
    case "unary_expression": {
      const op = node.children.find((c) => c?.type === "test_operator");
      if (op?.text === "-v") {
        nameArgument(node.text.slice(op.endIndex - node.startIndex).trim(), null, a);
      }
      break;
    }
    case "expansion": {
      const kids = node.children.filter((c): c is SyntaxNode => c !== null);
      const name = kids.find((c) => c.type === "variable_name" || c.type === "subscript");
      const at = kids.findIndex((c) => c.type === "@");
      if (at >= 0 && kids[at + 1]?.text === "P" && name) {
        a.contexts.push({ text: name.text, what: "a prompt expansion (`@P`)" });
      }
      if (kids[1]?.type === "!" && name) {
        a.contexts.push({ text: name.text, what: "an indirect expansion (`${!x}`)" });
      }
      const colon = kids.findIndex((c) => c.type === ":");
      if (colon >= 0 && name && kids[colon - 1]?.startIndex === name.startIndex) {
        a.contexts.push({
          text: kids.slice(colon + 1, -1).map((c) => c.text).join(" "),
          what: "a substring offset",
        });
      }
      break;
    }
  }
}

function insideDoubleBracket(node: SyntaxNode): boolean {
  for (let p: SyntaxNode | null = node.parent; p !== null; p = p.parent) {
    if (p.type === "test_command") return p.children[0]?.type === "[[";
  }
  return false;
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

function collect(node: SyntaxNode, a: Analysis) {
  if (COMMAND_TYPES.has(node.type)) {
    const parent = node.parent;
    // An assignment that prefixes a command belongs to that command.
    const prefix = node.type === "variable_assignment" &&
      (parent?.type === "command" || parent?.type === "variable_assignments");
    const inDeclaration = parent?.type === "declaration_command";
    if (!prefix && !inDeclaration) a.commands.push(commandOf(node, a));
  }
  if (node.type === "for_statement") {
    const variable = node.childForFieldName("variable");
    // (Nodes are fresh objects on every access: compare positions, not identities.)
    const values = node.namedChildren.filter((c): c is SyntaxNode =>
      c !== null && c.startIndex !== variable?.startIndex && c.type !== "do_group" &&
      c.type !== "comment"
    );
    const inList = node.children.some((c) => c?.type === "in");
    const safe = inList && values.every((v) => {
      const lit = literalWord(v);
      return lit !== null && !hasUnquotedGlob(v) && SAFE_ARITHMETIC_VALUE.test(lit);
    });
    if (variable) assign(a, variable.text, safe, false);
  }
  noteContexts(node, a);
  noteUnparsedCode(node, a);
  const w = writeOf(node);
  if (w) a.writes.push(w);
  for (const child of node.namedChildren) if (child !== null) collect(child, a);
}

/** An unescaped backtick or `$(` in raw text (code the shell would run). */
const RAW_CODE = /(^|[^\\])(\\\\)*(`|\$\()/;

/**
 * Code the grammar leaves as plain text although bash runs it: a backtick substitution in a
 * `${x:-…}` default or in the body of a heredoc whose delimiter is not quoted; a `{`/`}` word
 * (a brace group after `time`, `coproc` or `!`, which the grammar reads as words).
 */
function noteUnparsedCode(node: SyntaxNode, a: Analysis) {
  const what = "a command substitution the shell grammar here does not follow";
  switch (node.type) {
    case "word":
      if (RAW_CODE.test(node.text)) a.hazards.push(`${what} (\`${node.text}\`)`);
      else if (
        (node.text === "{" || node.text === "}") &&
        (node.parent?.type === "command" || node.parent?.type === "command_name")
      ) {
        a.hazards.push("a brace group the shell grammar here does not follow");
      }
      break;
    case "string_content":
      if (RAW_CODE.test(node.text)) a.hazards.push(`${what} (\`${node.text}\`)`);
      break;
    case "heredoc_body": {
      const start = node.parent?.children.find((c) => c?.type === "heredoc_start");
      const quoted = start ? /['"\\]/.test(start.text) : false;
      if (quoted) break;
      // Only the text between the parsed substitutions is raw.
      let raw = node.text;
      for (const c of node.namedChildren) {
        if (c !== null && c.type !== "heredoc_content") raw = raw.replace(c.text, " ");
      }
      if (RAW_CODE.test(raw)) a.hazards.push(`${what} (in a heredoc)`);
      break;
    }
  }
}

/** Identifiers a text evaluated as arithmetic refers to (`$x`, `${x}`, bare `x`, `$1`, `$@`). */
function referencedNames(text: string): string[] {
  const out: string[] = [];
  const re =
    /\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])|(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out.push(m[1] ?? m[2]);
  return out;
}

/** Hazards from evaluated texts that refer to a variable the line sets (or to `$1`, `$@`). */
function contextHazards(a: Analysis): string[] {
  const out: string[] = [];
  for (const c of a.contexts) {
    const bad = referencedNames(c.text).find((n) =>
      /^([0-9]+|[@*])$/.test(n) || a.assigned.get(n) === false
    );
    if (bad !== undefined) {
      out.push(
        `${c.what} (\`${c.text.trim()}\`) evaluates \`${bad}\`, whose value the line sets: ` +
          "evaluating it can run commands",
      );
    }
  }
  return out;
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
  const assigned = new Map<string, boolean>();
  const top = parseWith(parser, line, assigned);
  if (!top.ok) return top;
  const inner: ShellCommand[] = [];
  const innerWrites: ShellWrite[] = [];
  const hazards = [...top.hazards];
  const opaque: string[] = [];
  const cd = [...top.cd];
  const unwrapAll = (commands: ShellCommand[], depth: number): string | null => {
    for (const cmd of commands) {
      if (cmd.dynamicName) {
        hazards.push(
          `the command name \`${cmd.words[cmd.assignments]}\` is only known when it runs`,
        );
        continue;
      }
      const words: ShellWord[] = cmd.words.slice(cmd.assignments).map((value, i) => ({
        value,
        dynamic: cmd.wordDynamic[cmd.assignments + i],
      }));
      for (const u of unwrapCommand(words)) {
        if (u.kind === "opaque") {
          cmd.opaque ??= u.reason;
          opaque.push(u.reason);
          continue;
        }
        if (u.kind === "command") {
          const wrapped = commandFromWords(u.words, u.dynamicTail);
          inner.push(wrapped);
          const failed = unwrapAll([wrapped], depth);
          if (failed !== null) return failed;
          continue;
        }
        if (depth >= MAX_NESTING) return "shell code is nested too deeply";
        const nested = parseWith(parser, u.text, assigned);
        if (!nested.ok) return `the code run by \`${words[0].value}\` does not parse`;
        inner.push(...nested.commands);
        innerWrites.push(...nested.writes);
        hazards.push(...nested.hazards);
        cd.push(...nested.cd);
        const failed = unwrapAll(nested.commands, depth + 1);
        if (failed !== null) return failed;
      }
    }
    return null;
  };
  const failed = unwrapAll(top.commands, 1);
  if (failed !== null) return { ok: false, reason: failed };
  return {
    ok: true,
    commands: top.commands,
    writes: top.writes,
    inner,
    innerWrites,
    hazards: [...new Set(hazards)],
    opaque: [...new Set(opaque)],
    cd,
  };
}

/** A command from the words a wrapper runs. */
function commandFromWords(words: ShellWord[], dynamicTail: boolean): ShellCommand {
  const values = words.map((w) => w.value);
  const wordDynamic = words.map((w) => w.dynamic);
  return {
    text: values.join(" "),
    exact: words.map((w) => w.dynamic ? w.value : quoteWord(w.value)).join(" "),
    words: values,
    wordDynamic,
    wordGlob: words.map(() => false),
    assignments: 0,
    dynamic: wordDynamic.some((d) => d) || dynamicTail,
    dynamicName: wordDynamic[0] === true,
    dynamicTail,
    opaque: null,
  };
}

/** Nodes inside which a backslash-newline is kept or handled by {@link literalWord}. */
const QUOTED_TYPES = new Set([
  "raw_string",
  "string",
  "ansi_c_string",
  "translated_string",
  "heredoc_body",
  "comment",
]);

/** `line` without the backslash-newlines that lie outside quotes, heredocs and comments. */
function joinContinuations(line: string, root: SyntaxNode): string {
  if (!line.includes("\\\n")) return line;
  const quoted: [number, number][] = [];
  const walk = (n: SyntaxNode) => {
    if (QUOTED_TYPES.has(n.type)) {
      quoted.push([n.startIndex, n.endIndex]);
      return;
    }
    for (const c of n.children) if (c !== null) walk(c);
  };
  walk(root);
  let out = "";
  for (let i = 0; i < line.length; i++) {
    if (line[i] === "\\" && line[i + 1] === "\n") {
      if (!quoted.some(([s, e]) => i >= s && i < e) && !escaped(line, i)) {
        i++;
        continue;
      }
    }
    out += line[i];
  }
  return out;
}

/** Whether the character at `i` is itself escaped by an odd run of backslashes before it. */
function escaped(line: string, i: number): boolean {
  let n = 0;
  for (let j = i - 1; j >= 0 && line[j] === "\\"; j--) n++;
  return n % 2 === 1;
}

/**
 * Parse one piece of code. `assigned` carries the variables set by the code around it (a
 * variable exported before `bash -c` is still set inside) and gains this code's.
 */
function parseWith(
  parser: BashParser,
  line: string,
  assigned: Map<string, boolean>,
):
  | {
    ok: true;
    commands: ShellCommand[];
    writes: ShellWrite[];
    hazards: string[];
    cd: (string | null)[];
  }
  | { ok: false; reason: string } {
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
    // Bash removes a backslash-newline outside quotes before it splits words (`r\<newline>m`
    // is `rm`); the grammar takes it for a space between two words. Parse the joined line.
    const joined = joinContinuations(line, root);
    if (joined !== line) {
      tree.delete();
      tree = null;
      return parseWith(parser, joined, assigned);
    }
    const a: Analysis = {
      commands: [],
      writes: [],
      assigned,
      contexts: [],
      hazards: [],
      cd: [],
    };
    collect(root, a);
    if (a.commands.length === 0 && line.trim()) {
      return { ok: false, reason: "no command found in the line" };
    }
    return {
      ok: true,
      commands: a.commands,
      writes: a.writes,
      hazards: [...a.hazards, ...contextHazards(a)],
      cd: a.cd,
    };
  } finally {
    tree?.delete();
  }
}
