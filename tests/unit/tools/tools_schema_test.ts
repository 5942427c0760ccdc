/**
 * JSON Schema goldens of the file tools: the shape the model sees (`io: "input"`, `$schema`
 * removed) must match the reference's parameter schemas (names, types, defaults, bounds,
 * `anyOf` nullables); descriptions are ours.
 */
import { assertEquals } from "../../helpers/assert.ts";
import { makeToolEnv, modelSchema } from "../../helpers/tool_env.ts";
import { globTool } from "../../../tools/glob.ts";
import { grepTool } from "../../../tools/grep.ts";
import { readFileTool } from "../../../tools/read_file.ts";
import { readMediaFileTool } from "../../../tools/read_media_file.ts";
import { strReplaceFileTool } from "../../../tools/str_replace_file.ts";
import { writeFileTool } from "../../../tools/write_file.ts";
import type { ToolFactory } from "../../../lib/tooling/tool.ts";

const env = makeToolEnv({ workDir: "/tmp", capabilities: ["image_in", "video_in"] });

async function schemaOf(factory: ToolFactory): Promise<Record<string, unknown>> {
  const tool = await factory(env);
  if (!tool) throw new Error("tool skipped itself");
  return modelSchema(tool);
}

const nullable = (inner: Record<string, unknown>) => ({ anyOf: [inner, { type: "null" }] });

Deno.test("ReadFile schema", async () => {
  assertEquals(await schemaOf(readFileTool), {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Path of the file to read. Relative paths are resolved against the " +
          "working directory; files outside it need an absolute path.",
      },
      line_offset: {
        type: "integer",
        default: 1,
        description: "Line number to start from (1 = first line). Use it to page through a " +
          "file too large for one call. Negative values read from the end: -N returns the " +
          "last N lines (N at most 1000).",
      },
      n_lines: {
        type: "integer",
        default: 1000,
        minimum: 1,
        description: "How many lines to read; 1000, the default, is also the most one call " +
          "returns.",
      },
    },
    required: ["path"],
  });
});

Deno.test("ReadMediaFile schema", async () => {
  assertEquals(await schemaOf(readMediaFileTool), {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Path of the image or video to read. Relative paths are resolved " +
          "against the working directory; files outside it need an absolute path.",
      },
    },
    required: ["path"],
  });
});

Deno.test("WriteFile schema", async () => {
  assertEquals(await schemaOf(writeFileTool), {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Path of the file to write. Relative paths are resolved against the " +
          "working directory; files outside it need an absolute path.",
      },
      content: { type: "string", description: "The text to write." },
      mode: {
        type: "string",
        enum: ["overwrite", "append"],
        default: "overwrite",
        description: "`overwrite` replaces the whole file with `content`; `append` adds " +
          "`content` after the existing text.",
      },
    },
    required: ["path", "content"],
  });
});

Deno.test("StrReplaceFile schema", async () => {
  const edit = {
    type: "object",
    properties: {
      old: { type: "string", description: "The exact text to find; it may span several lines." },
      new: {
        type: "string",
        description: "The text to put in its place; it may span several lines.",
      },
      replace_all: {
        type: "boolean",
        default: false,
        description: "Replace every occurrence instead of only the first.",
      },
    },
    required: ["old", "new"],
  };
  assertEquals(await schemaOf(strReplaceFileTool), {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "Path of the file to edit. Relative paths are resolved against the " +
          "working directory; files outside it need an absolute path.",
      },
      edit: {
        anyOf: [edit, { type: "array", items: edit }],
        description: "One edit, or a list of edits applied in order.",
      },
    },
    required: ["path", "edit"],
  });
});

Deno.test("Glob schema", async () => {
  assertEquals(await schemaOf(globTool), {
    type: "object",
    properties: {
      pattern: { type: "string", description: "The glob pattern files or directories must match." },
      directory: {
        ...nullable({ type: "string" }),
        default: null,
        description: "Absolute path of the directory to search from; the working directory " +
          "when omitted.",
      },
      include_dirs: {
        type: "boolean",
        default: true,
        description: "Whether directories are listed along with files.",
      },
    },
    required: ["pattern"],
  });
});

Deno.test("Grep schema", async () => {
  assertEquals(await schemaOf(grepTool), {
    type: "object",
    properties: {
      pattern: { type: "string", description: "Regular expression to search file contents for." },
      path: {
        type: "string",
        default: ".",
        description:
          "File or directory to search (absolute when set); default: the working directory.",
      },
      glob: {
        ...nullable({ type: "string" }),
        default: null,
        description: "Only search files matching this glob, e.g. `*.ts` or `*.{js,jsx}`.",
      },
      output_mode: {
        type: "string",
        default: "files_with_matches",
        description:
          "`files_with_matches` lists matching paths; `content` shows matching lines (with `-A`, `-B`, `-C`, `-n`); `count_matches` counts matches per file.",
      },
      "-B": {
        ...nullable({ type: "integer" }),
        default: null,
        description: "Lines of context before each match (`content` mode).",
      },
      "-A": {
        ...nullable({ type: "integer" }),
        default: null,
        description: "Lines of context after each match (`content` mode).",
      },
      "-C": {
        ...nullable({ type: "integer" }),
        default: null,
        description: "Lines of context around each match (`content` mode).",
      },
      "-n": {
        type: "boolean",
        default: true,
        description: "Prefix matching lines with line numbers (`content` mode).",
      },
      "-i": {
        type: "boolean",
        default: false,
        description: "Match without regard to letter case.",
      },
      type: {
        ...nullable({ type: "string" }),
        default: null,
        description:
          "Only search files of this ripgrep type, e.g. `py`, `rust`, `ts`, `go` (faster than `glob`).",
      },
      head_limit: {
        ...nullable({ type: "integer", minimum: 0 }),
        default: 250,
        description:
          "Return at most this many lines or entries (like `| head -N`); 0 = no limit (can flood the context).",
      },
      offset: {
        type: "integer",
        default: 0,
        minimum: 0,
        description:
          "Skip this many lines or entries before `head_limit` applies, to page through results.",
      },
      multiline: {
        type: "boolean",
        default: false,
        description:
          "Let matches span lines, with `.` matching line breaks (`-U --multiline-dotall`).",
      },
      include_ignored: {
        type: "boolean",
        default: false,
        description:
          "Also search files excluded by `.gitignore`/`.ignore` rules (e.g. `node_modules`); secret files stay excluded.",
      },
    },
    required: ["pattern"],
  });
});

Deno.test("property order matches the reference", async () => {
  const keys = async (f: ToolFactory) => Object.keys((await schemaOf(f)).properties as object);
  assertEquals(await keys(readFileTool), ["path", "line_offset", "n_lines"]);
  assertEquals(await keys(globTool), ["pattern", "directory", "include_dirs"]);
  assertEquals(await keys(grepTool), [
    "pattern",
    "path",
    "glob",
    "output_mode",
    "-B",
    "-A",
    "-C",
    "-n",
    "-i",
    "type",
    "head_limit",
    "offset",
    "multiline",
    "include_ignored",
  ]); // deno-fmt-ignore
});

Deno.test("integer parameters reject fractions and out-of-range values", async () => {
  const tool = (await readFileTool(env))!;
  assertEquals(tool.parameters.safeParse({ path: "a", n_lines: 1.5 }).success, false);
  assertEquals(tool.parameters.safeParse({ path: "a", n_lines: 0 }).success, false);
  assertEquals(tool.parameters.safeParse({ path: "a", line_offset: 0 }).success, false);
  assertEquals(tool.parameters.safeParse({ path: "a", line_offset: -1001 }).success, false);
  assertEquals(tool.parameters.safeParse({ path: "a", line_offset: -1000 }).success, true);
  const grep = (await grepTool(env))!;
  assertEquals(grep.parameters.safeParse({ pattern: "x", head_limit: -1 }).success, false);
  assertEquals(grep.parameters.safeParse({ pattern: "x", head_limit: null }).success, true);
  assertEquals(grep.parameters.parse({ pattern: "x" }), {
    pattern: "x",
    path: ".",
    glob: null,
    output_mode: "files_with_matches",
    "-B": null,
    "-A": null,
    "-C": null,
    "-n": true,
    "-i": false,
    type: null,
    head_limit: 250,
    offset: 0,
    multiline: false,
    include_ignored: false,
  });
});

Deno.test("ReadMediaFile skips itself without image or video input", async () => {
  assertEquals(await readMediaFileTool(makeToolEnv({ workDir: "/tmp" })), null);
  assertEquals(
    (await readMediaFileTool(makeToolEnv({ workDir: "/tmp", capabilities: ["video_in"] })))?.name,
    "ReadMediaFile",
  );
});
