/**
 * The system prompt template language: `${NAME}` substitution (strict: a missing variable is
 * an error) plus the small Jinja-style conditional subset agent prompts use —
 * `{% if NAME %}`, `{% if NAME == "text" %}`, `{% if NAME != "text" %}`, `{% if not NAME %}`,
 * `{% elif ... %}`, `{% else %}`, `{% endif %}` — with Jinja's `trim_blocks` and
 * `lstrip_blocks` whitespace rules (a tag alone on its line leaves no blank line behind).
 *
 * Substituted values are inserted verbatim: `{%` or `${` inside a value (an AGENTS.md, say) is
 * never interpreted.
 *
 * @module
 */

/** A template that cannot be rendered: a missing variable or a malformed `{% %}` tag. */
export class PromptTemplateError extends Error {
  /** Create the error; `message` names the template file and the cause. */
  constructor(message: string) {
    super(message);
    this.name = "PromptTemplateError";
  }
}

type Condition =
  | { kind: "truthy"; name: string; negate: boolean }
  | { kind: "compare"; name: string; op: "==" | "!="; value: string };

type Node =
  | { kind: "text"; text: string }
  | { kind: "if"; branches: { cond: Condition | null; body: Node[] }[] };

const TAG = /\{%-?\s*([\s\S]*?)\s*-?%\}/g;
const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const NAME = "[A-Za-z_][A-Za-z0-9_]*";
const STRING = `"((?:[^"\\\\]|\\\\.)*)"|'((?:[^'\\\\]|\\\\.)*)'`;
const COMPARE = new RegExp(`^(${NAME})\\s*(==|!=)\\s*(?:${STRING})$`);
const TRUTHY = new RegExp(`^(not\\s+)?(${NAME})$`);

/**
 * Render `template` with `vars`. `source` names the template in errors
 * (`Missing system prompt arg in <source>: <NAME>`).
 *
 * @throws {PromptTemplateError} on a missing variable or a malformed tag.
 */
export function renderPromptTemplate(
  template: string,
  vars: Readonly<Record<string, string>>,
  source: string,
): string {
  const nodes = parse(template, source);
  return renderNodes(nodes, vars, source);
}

/** Split into text and tags, applying lstrip_blocks / trim_blocks, then build the tree. */
function parse(template: string, source: string): Node[] {
  type Frame = { node: Extract<Node, { kind: "if" }>; elseSeen: boolean };
  const root: Node[] = [];
  const stack: Frame[] = [];
  const current = (): Node[] => {
    const top = stack.at(-1);
    return top ? top.node.branches.at(-1)!.body : root;
  };
  let pos = 0;
  for (const m of template.matchAll(TAG)) {
    let text = template.slice(pos, m.index);
    // lstrip_blocks: drop spaces/tabs between the start of the line and the tag.
    const lineStart = text.lastIndexOf("\n") + 1;
    const atLineStart = lineStart > 0 || pos === 0 || template[pos - 1] === "\n";
    if (atLineStart && /^[ \t]*$/.test(text.slice(lineStart))) {
      text = text.slice(0, lineStart);
    }
    if (text) current().push({ kind: "text", text });
    pos = m.index + m[0].length;
    // trim_blocks: drop the first newline after the tag.
    if (template.startsWith("\r\n", pos)) pos += 2;
    else if (template[pos] === "\n") pos += 1;

    const body = m[1];
    const [keyword, rest] = splitKeyword(body);
    if (keyword === "if") {
      const node: Extract<Node, { kind: "if" }> = {
        kind: "if",
        branches: [{ cond: parseCondition(rest, source), body: [] }],
      };
      current().push(node);
      stack.push({ node, elseSeen: false });
    } else if (keyword === "elif" || keyword === "else") {
      const top = stack.at(-1);
      if (!top) throw tagError(source, body, `{% ${keyword} %} without a matching {% if %}`);
      if (top.elseSeen) throw tagError(source, body, `{% ${keyword} %} after {% else %}`);
      if (keyword === "else") {
        if (rest) throw tagError(source, body, "{% else %} takes no condition");
        top.elseSeen = true;
        top.node.branches.push({ cond: null, body: [] });
      } else {
        top.node.branches.push({ cond: parseCondition(rest, source), body: [] });
      }
    } else if (keyword === "endif") {
      if (!stack.pop()) throw tagError(source, body, "{% endif %} without a matching {% if %}");
    } else {
      throw tagError(
        source,
        body,
        "only if / elif / else / endif tags are supported in system prompts",
      );
    }
  }
  if (stack.length > 0) {
    throw new PromptTemplateError(
      `Invalid system prompt template in ${source}: an {% if %} block is never closed; add {% endif %}`,
    );
  }
  const tail = template.slice(pos);
  if (tail) current().push({ kind: "text", text: tail });
  return root;
}

function splitKeyword(body: string): [string, string] {
  const m = /^(\S+)\s*([\s\S]*)$/.exec(body);
  return m ? [m[1], m[2].trim()] : ["", ""];
}

function parseCondition(expr: string, source: string): Condition {
  const cmp = COMPARE.exec(expr);
  if (cmp) {
    const raw = cmp[3] ?? cmp[4] ?? "";
    return {
      kind: "compare",
      name: cmp[1],
      op: cmp[2] as "==" | "!=",
      value: raw.replace(/\\(.)/g, "$1"),
    };
  }
  const truthy = TRUTHY.exec(expr);
  if (truthy) return { kind: "truthy", name: truthy[2], negate: Boolean(truthy[1]) };
  throw tagError(
    source,
    `if ${expr}`,
    'conditions must be NAME, not NAME, NAME == "text" or NAME != "text"',
  );
}

function tagError(source: string, body: string, why: string): PromptTemplateError {
  return new PromptTemplateError(
    `Invalid system prompt template in ${source}: {% ${body} %}: ${why}`,
  );
}

function lookup(vars: Readonly<Record<string, string>>, name: string, source: string): string {
  if (!Object.hasOwn(vars, name)) {
    throw new PromptTemplateError(`Missing system prompt arg in ${source}: ${name}`);
  }
  return vars[name];
}

function holds(cond: Condition, vars: Readonly<Record<string, string>>, source: string): boolean {
  const value = lookup(vars, cond.name, source);
  if (cond.kind === "truthy") return (value !== "") !== cond.negate;
  return (value === cond.value) === (cond.op === "==");
}

function renderNodes(
  nodes: Node[],
  vars: Readonly<Record<string, string>>,
  source: string,
): string {
  let out = "";
  for (const node of nodes) {
    if (node.kind === "text") {
      out += node.text.replace(VAR, (_whole, name: string) => lookup(vars, name, source));
      continue;
    }
    const branch = node.branches.find((b) => b.cond === null || holds(b.cond, vars, source));
    if (branch) out += renderNodes(branch.body, vars, source);
  }
  return out;
}
