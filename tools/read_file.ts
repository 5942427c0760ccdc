/**
 * ReadFile: read a window of lines from a text file, numbered like `cat -n`, within line, line
 * length and byte limits; negative offsets read the tail.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset, renderTemplate } from "../lib/assets/mod.ts";
import { type FileBackend, fileBackend } from "../lib/tooling/file_backend.ts";
import { integer } from "../lib/tooling/param_types.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { FilePin } from "../lib/fs/real_path.ts";
import { inspectReadFile, readInvocation } from "../lib/tooling/read_target.ts";
import { readForward, readTail, type TextWindow } from "../lib/tooling/text_window.ts";
import type { Tool, ToolFactory, ToolReturnValue } from "../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Most lines one call returns. */
export const MAX_LINES = 1000;
/** Longest line returned, in characters (longer lines are cut). */
export const MAX_LINE_LENGTH = 2000;
/** Most bytes one call returns. */
export const MAX_BYTES = 100 << 10;

/** ReadFile parameters. */
export const readFileParamsSchema = lazyValue(() =>
  z.object({
    path: z.string().describe(
      "Path of the file to read. Relative paths are resolved against the working directory; " +
        "files outside it need an absolute path.",
    ),
    line_offset: integer().default(1).describe(
      "Line number to start from (1 = first line). Use it to page through a file too large for " +
        `one call. Negative values read from the end: -N returns the last N lines (N at most ${MAX_LINES}).`,
    ),
    n_lines: integer().min(1).default(MAX_LINES).describe(
      `How many lines to read; ${MAX_LINES}, the default, is also the most one call returns.`,
    ),
  }).superRefine((p, ctx) => {
    if (p.line_offset === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["line_offset"],
        message: "line_offset cannot be 0; use 1 for the first line or -1 for the last line",
      });
    } else if (p.line_offset < -MAX_LINES) {
      ctx.addIssue({
        code: "custom",
        path: ["line_offset"],
        message: `line_offset cannot be less than -${MAX_LINES}. Use a positive line_offset ` +
          "with the total line count to read from a specific position.",
      });
    }
  })
);
/** ReadFile parameters. */
export type ReadFileParams = z.infer<ReturnType<typeof readFileParamsSchema>>;

/** The refusal for a binary (non-text, non-media) file. */
export function notReadableMessage(shownPath: string): string {
  return `\`${shownPath}\` seems not readable. It does not look like text; inspect it with ` +
    "shell commands, a script or an MCP tool instead (and keep any Python packages you " +
    "install in a virtual environment).";
}

function pyList(nums: number[]): string {
  return `[${nums.join(", ")}]`;
}

function render(win: TextWindow, nLines: number, startLine: number): ToolReturnValue {
  const output = win.lines.map((l) => `${String(l.lineNo).padStart(6)}\t${l.text}`).join("");
  let message = win.lines.length > 0
    ? `${win.lines.length} lines read from file starting from line ${startLine}.`
    : "No lines read from file.";
  message += ` Total lines in file: ${win.totalLines}.`;
  if (win.maxLinesReached) message += ` Max ${MAX_LINES} lines reached.`;
  else if (win.maxBytesReached) message += ` Max ${MAX_BYTES} bytes reached.`;
  else if (win.lines.length < nLines) message += " End of file reached.";
  const cut = win.lines.filter((l) => l.truncated).map((l) => l.lineNo);
  if (cut.length > 0) message += ` Lines ${pyList(cut)} were truncated.`;
  return toolOk({ output, message });
}

/** Builds the ReadFile tool. */
export const readFileTool: ToolFactory = (env): Tool<ReadFileParams> => ({
  name: "ReadFile",
  description: renderTemplate(readAsset("tools/read_file.md"), {
    MAX_LINES: String(MAX_LINES),
    MAX_LINE_LENGTH: String(MAX_LINE_LENGTH),
    MAX_BYTES: String(MAX_BYTES),
  }),
  get parameters() {
    return readFileParamsSchema();
  },
  jsonSchema: PARAM_JSON_SCHEMAS.ReadFile,
  isRoot: env.isRoot,
  resolve: (params) =>
    readInvocation(params.path, env, (p, pin) => readWindow(p, params, pin, fileBackend(env))),
});

/**
 * The requested window of the text file at the checked path `p`: from disk (pinned to the
 * checked file), or from the editor holding it (an ACP client's buffer, which may differ from
 * the disk).
 */
async function readWindow(
  p: string,
  params: ReadFileParams,
  pin: FilePin | null,
  files: FileBackend,
): Promise<ToolReturnValue> {
  const kind = await inspectReadFile(params.path, p, pin);
  if (!kind.ok) return kind.error;
  const type = kind.type;
  if (type.kind === "image" || type.kind === "video") {
    return toolError({
      message: `\`${params.path}\` is a ${type.kind} file. ` +
        "Use other appropriate tools to read image or video files.",
      brief: "Unsupported file type",
    });
  }
  if (type.kind === "binary") {
    return toolError({
      message: notReadableMessage(params.path),
      brief: "File not readable",
    });
  }

  const limits = {
    nLines: params.n_lines,
    maxLines: MAX_LINES,
    maxBytes: MAX_BYTES,
    maxLineLength: MAX_LINE_LENGTH,
    pin,
  };
  const source = files.name === "local" ? p : () => files.chunks(p);
  if (params.line_offset < 0) {
    const win = await readTail(source, -params.line_offset, limits);
    const start = win.lines.length > 0 ? win.lines[0].lineNo : win.totalLines + 1;
    return render(win, params.n_lines, start);
  }
  const win = await readForward(source, params.line_offset, limits);
  return render(win, params.n_lines, params.line_offset);
}
