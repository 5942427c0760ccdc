/**
 * StrReplaceFile: apply exact string replacements to a file after the user approves the diff.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { buildDiffBlocks } from "../lib/tooling/diff_blocks.ts";
import { type FileBackend, fileBackend } from "../lib/tooling/file_backend.ts";
import {
  confirmFileTarget,
  fileChangeApproval,
  resolveFileTarget,
  writeResolvedFile,
} from "../lib/tooling/file_target.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolFactory, ToolReturnValue } from "../lib/tooling/tool.ts";
import type { DisplayBlock } from "../lib/wire/display.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** One replacement. */
export const editSchema = lazyValue(() =>
  z.object({
    old: z.string().describe("The exact text to find; it may span several lines."),
    new: z.string().describe("The text to put in its place; it may span several lines."),
    replace_all: z.boolean().default(false).describe(
      "Replace every occurrence instead of only the first.",
    ),
  })
);
/** One replacement. */
export type Edit = z.infer<ReturnType<typeof editSchema>>;

/** StrReplaceFile parameters. */
export const strReplaceFileParamsSchema = lazyValue(() =>
  z.object({
    path: z.string().describe(
      "Path of the file to edit. Relative paths are resolved against the working directory; " +
        "files outside it need an absolute path.",
    ),
    edit: z.union([editSchema(), z.array(editSchema())]).describe(
      "One edit, or a list of edits applied in order.",
    ),
  })
);
/** StrReplaceFile parameters. */
export type StrReplaceFileParams = z.infer<ReturnType<typeof strReplaceFileParamsSchema>>;

/** Non-overlapping occurrences of `needle` in `haystack`. */
function occurrences(haystack: string, needle: string): number {
  let n = 0;
  let i = haystack.indexOf(needle);
  while (i !== -1) {
    n++;
    i = haystack.indexOf(needle, i + needle.length);
  }
  return n;
}

/** Apply one edit (first occurrence, or all with `replace_all`). */
export function applyEdit(content: string, edit: Edit): string {
  if (edit.replace_all) return content.split(edit.old).join(edit.new);
  const i = content.indexOf(edit.old);
  return i === -1 ? content : content.slice(0, i) + edit.new + content.slice(i + edit.old.length);
}

/** Builds the StrReplaceFile tool. */
export const strReplaceFileTool: ToolFactory = (env): Tool<StrReplaceFileParams> => ({
  name: "StrReplaceFile",
  description: readAsset("tools/str_replace_file.md"),
  get parameters() {
    return strReplaceFileParamsSchema();
  },
  jsonSchema: PARAM_JSON_SCHEMAS.StrReplaceFile,
  isRoot: env.isRoot,
  resolve(params) {
    const failed = (e: unknown) =>
      toolError({
        message: `Failed to edit. Error: ${e instanceof Error ? e.message : e}`,
        brief: "Failed to edit file",
      });
    let target;
    try {
      target = resolveFileTarget(params.path, env, "edit");
    } catch (e) {
      return failed(e);
    }
    if (!target.ok) return target.error;
    const p = target.path;
    // The editor's buffer when an ACP client holds the file, else the disk.
    const files = fileBackend(env);
    const edits = Array.isArray(params.edit) ? params.edit : [params.edit];
    let edited = { text: "", replacements: 0, diff: [] as DisplayBlock[] };
    return {
      accesses: [{ kind: "write", path: p }],
      async approval() {
        try {
          const planned = await planEdits(params, { path: p, edits, files, target });
          if ("is_error" in planned) return planned;
          edited = planned;
          return fileChangeApproval(target, {
            env,
            description: `Edit file \`${p}\``,
            display: edited.diff,
          });
        } catch (e) {
          return failed(e);
        }
      },
      async execute() {
        try {
          // Checked again after the approval wait: the path must still lead where it was approved.
          const changed = confirmFileTarget(params.path, p, env) ??
            (files.name === "local"
              ? await writeResolvedFile(params.path, p, edited.text, { append: false })
              : null);
          if (changed) return changed;
          if (files.name !== "local") await files.writeText(p, edited.text);
          return toolOk({
            output: "",
            message: "File successfully edited. " +
              `Applied ${edits.length} edit(s) with ${edited.replacements} total replacement(s).`,
            display: edited.diff,
          });
        } catch (e) {
          return failed(e);
        }
      },
    };
  },
});

/** The edited text, its replacement count and diff; or the error when nothing can be edited. */
async function planEdits(
  params: StrReplaceFileParams,
  opts: {
    path: string;
    edits: Edit[];
    files: FileBackend;
    target: { isPlanFile: boolean };
  },
): Promise<{ text: string; replacements: number; diff: DisplayBlock[] } | ToolReturnValue> {
  const { path: p, edits, files } = opts;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(p);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    if (opts.target.isPlanFile) {
      return toolError({
        message: "The current plan file does not exist yet. " +
          "Use WriteFile to create it before calling StrReplaceFile.",
        brief: "Plan file not created",
      });
    }
    return toolError({ message: `\`${params.path}\` does not exist.`, brief: "File not found" });
  }
  if (!info.isFile) {
    return toolError({ message: `\`${params.path}\` is not a file.`, brief: "Invalid path" });
  }
  if (edits.some((e) => e.old === "")) {
    return toolError({ message: "The `old` string cannot be empty.", brief: "Invalid edit" });
  }
  const raw = await files.readText(p);
  if (raw === null) {
    return toolError({ message: `\`${params.path}\` does not exist.`, brief: "File not found" });
  }
  const crlf = raw.includes("\r\n");
  const original = crlf ? raw.replaceAll("\r\n", "\n") : raw;
  let content = original;
  for (const edit of edits) content = applyEdit(content, edit);
  if (content === original) {
    return toolError({
      message: "No replacements were made. The old string was not found in the file.",
      brief: "No replacements made",
    });
  }
  let replacements = 0;
  for (const edit of edits) {
    replacements += edit.replace_all
      ? occurrences(original, edit.old)
      : original.includes(edit.old)
      ? 1
      : 0;
  }
  const diff = await buildDiffBlocks(p, original, content);
  return { text: crlf ? content.replaceAll("\n", "\r\n") : content, replacements, diff };
}
