import { REPO_ROOT } from "../../helpers/import_graph.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import {
  blankNonCode,
  findModuleState,
  type ModuleSource,
  mutates,
  readModules,
} from "../../helpers/module_state.ts";

/**
 * The only module-level state allowed in `lib/` and `tools/`: pure memo caches of immutable
 * data, process-wide configuration of the process's own output, and the terminal's UI state.
 * Run state (sandbox, control paths, output, tasks, approvals, hooks) belongs to a session and
 * travels on its tool environment (`ToolEnv.run`), never here. Keyed `file:name`.
 */
const ALLOWED: Readonly<Record<string, string>> = {
  "lib/assets/yaml.ts:parser": "memo of the lazily imported YAML parser (a pure function)",
  "lib/assets/yaml.ts:loading": "the in-flight import of that parser (same memo)",
  "lib/auth/token_manager.ts:managers":
    "one OAuth refresher per credentials dir: sessions share the login, and a rotating refresh " +
    "token must not be refreshed twice at once; it holds no session state",
  "lib/log.ts:logFile": "the process's one log file, set once by the CLI entry (`kimi.log`)",
  "lib/log.ts:minLevel": "the process's log level, set once by the CLI entry (`--debug`)",
  "lib/log.ts:sessionContext":
    "an AsyncLocalStorage: holds no value itself; each session's async context carries its id",
  "lib/permission/evaluate.ts:picomatch": "memo of the lazily imported glob matcher",
  "lib/permission/evaluate.ts:commandRegexCache":
    "memo of compiled command patterns: a pure function of the pattern text",
  "lib/permission/evaluate.ts:globCache":
    "memo of compiled glob matchers: a pure function of the pattern text",
  "lib/permission/shell_parse.ts:parserPromise": "memo of the lazily loaded bash parser",
  "lib/search/rg_types.ts:table": "memo of ripgrep's file-type table, immutable once built",
  "lib/search/ripgrep.ts:rgPathPromise": "memo of where the rg program is (one per machine)",
  "lib/ui/shell/markdown.ts:loading": "memo of the lazily imported markdown renderer",
  "lib/ui/shell/theme.ts:enabled":
    "UI state of the one terminal this process draws on (shell UI only; `--no-color`)",
  "lib/ui/shell/theme.ts:theme": "UI state of the one terminal this process draws on (`/theme`)",
  "lib/wire/messages.ts:defaultedFields":
    "memo of each wire schema's defaulted fields: a pure function of the (immutable) schema",
  "tools/registry.ts:factories": "memo of the lazily imported built-in tool factories module",
};

function source(file: string, text: string): ModuleSource {
  return { file, source: text };
}

function found(modules: ModuleSource[]): string[] {
  return findModuleState(modules).map((f) => `${f.file}:${f.line}:${f.name}:${f.kind}`);
}

Deno.test("module state: lib/ and tools/ hold no mutable module-level state but the allowed", async () => {
  const modules = await readModules(REPO_ROOT, ["lib", "tools"]);
  assert(modules.length > 250, `only ${modules.length} modules read`);
  const findings = findModuleState(modules);
  const unlisted = findings
    .filter((f) => !(`${f.file}:${f.name}` in ALLOWED))
    .map((f) =>
      `${f.file}:${f.line} ${f.name} (${f.kind}): run state belongs to its session (put it ` +
      "on the session's objects, e.g. ToolEnv.run); a pure memo cache of immutable data goes " +
      "in ALLOWED with its reason"
    );
  assertEquals(unlisted, []);
  // The list stays honest: an entry whose state is gone is removed.
  const seen = new Set(findings.map((f) => `${f.file}:${f.name}`));
  assertEquals(Object.keys(ALLOWED).filter((k) => !seen.has(k)), []);
});

Deno.test("module state: a new top-level let/var, a mutated registry or a globalThis write is found", () => {
  const files = [
    source("lib/a.ts", "let current = 0;\nexport var count = 1;\n"),
    source(
      "lib/b.ts",
      "const REGISTRY = new Map<string, number>();\n" +
        "export function register(k: string) {\n  REGISTRY.set(k, 1);\n}\n",
    ),
    source(
      "lib/c.ts",
      "const listeners: Set<(x: number) => void> = new Set();\n" +
        "export const on = (l: (x: number) => void) => listeners.add(l);\n",
    ),
    source(
      "lib/d.ts",
      "const seen: string[] = [];\nexport function see(s: string) {\n  seen.push(s);\n}\n",
    ),
    source("lib/e.ts", "const state = { n: 0 };\nexport function bump() {\n  state.n += 1;\n}\n"),
    source("lib/f.ts", "export const shared = {} as Record<string, string>;\n"),
    source(
      "lib/g.ts",
      'import { shared } from "./f.ts";\nexport function put() {\n  shared["k"] = "v";\n}\n',
    ),
    source(
      "lib/h.ts",
      "export function install() {\n  globalThis.__x = 1;\n  (globalThis as { y?: number }).y ??= 2;\n" +
        '  Object.assign(globalThis, { z: 3 });\n  globalThis["w"] = 4;\n}\n',
    ),
    source(
      "lib/i.ts",
      'const marks = new WeakMap<object, string>();\nexport const mark = (o: object) => marks.set(o, "m");\n',
    ),
    source("lib/j.ts", "class Registry {\n  static instances = new Map<string, Registry>();\n}\n"),
    source(
      "lib/k.ts",
      "const cache =\n  new Map<string, string>();\nexport const put = () => cache.clear();\n",
    ),
    source("lib/l.ts", "const bus = new EventTarget();\nexport { bus };\n"),
  ];
  assertEquals(found(files), [
    "lib/a.ts:1:current:top-level let",
    "lib/a.ts:2:count:top-level var",
    "lib/b.ts:1:REGISTRY:mutated Map",
    "lib/c.ts:1:listeners:mutated Set",
    "lib/d.ts:1:seen:mutated array",
    "lib/e.ts:1:state:mutated object",
    "lib/f.ts:1:shared:mutated object",
    "lib/h.ts:2:globalThis:globalThis write",
    "lib/h.ts:3:globalThis:globalThis write",
    "lib/h.ts:4:globalThis:globalThis write",
    "lib/h.ts:5:globalThis:globalThis write",
    "lib/i.ts:1:marks:mutated WeakMap",
    "lib/j.ts:2:instances:mutable static field",
    "lib/k.ts:1:cache:mutated Map",
    "lib/l.ts:1:bus:top-level instance of EventTarget",
  ]);
});

Deno.test("module state: immutable tables, local state, strings and comments are not state", () => {
  const files = [
    source(
      "lib/ok.ts",
      [
        'const NAMES = new Set(["a", "b"]);',
        "export const TABLE: Readonly<Record<string, number>> = { a: 1 };",
        "const LIST = [1, 2, 3];",
        "const encoder = new TextEncoder();",
        'const RE = new RegExp("x");',
        "/* let commented = 1; globalThis.x = 1; */",
        "// let alsoCommented = 2;",
        'const text = "let inString = 3; NAMES.add(1)";',
        "const tpl = `",
        "let inTemplate = 4;",
        "${LIST.length}`;",
        "export function f(): number {",
        "  let local = 0;",
        "  const m = new Map<string, number>();",
        '  m.set("a", 1);',
        "  local += [...LIST].sort().length + (globalThis.foo === 1 ? 1 : 0);",
        '  return local + m.size + TABLE.a + (NAMES.has("a") ? 1 : 0) + text.length + tpl.length;',
        "}",
        "class C {",
        '  static readonly KINDS = new Set(["x"]);',
        "  #own = new Map<string, string>();",
        "  put() {",
        '    this.#own.set("a", "b");',
        "  }",
        "}",
        "export { C, encoder, RE };",
      ].join("\n"),
    ),
  ];
  assertEquals(found(files), []);
});

Deno.test("module state: comments, strings and templates are blanked, line breaks kept", () => {
  const text = 'a /* b */ "c" `d${e}f` // g\nh';
  const out = blankNonCode(text);
  assertEquals(out.length, text.length);
  assertEquals(out.replace(/ +/g, " "), 'a " " ` ${e} ` \nh');
  assert(mutates("x.y.z = 1", "x"));
  assert(mutates("x[k] = 1", "x"));
  assert(!mutates("x === 1 || y.x = 2", "x"));
  assert(!mutates("const z = x.y;", "x"));
});
