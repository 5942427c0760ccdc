/**
 * StrReplaceFile: apply exact string replacements to a file after the user approves the diff.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { buildDiffBlocks } from "../lib/tooling/diff_blocks.ts";
import { fileBackend } from "../lib/tooling/file_backend.ts";
import {
  approveFileChange,
  confirmFileTarget,
  resolveFileTarget,
  writeResolvedFile,
} from "../lib/tooling/file_target.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type {
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolFactory,
  ToolReturnValue,
} from "../lib/tooling/tool.ts";
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

class StrReplaceFileTool implements Tool<StrReplaceFileParams> {
  readonly name = "StrReplaceFile";
  readonly description = readAsset("tools/str_replace_file.md");
  get parameters() {
    return strReplaceFileParamsSchema();
  }
  readonly jsonSchema = PARAM_JSON_SCHEMAS.StrReplaceFile;
  readonly #env: ToolEnv;

  constructor(env: ToolEnv) {
    this.#env = env;
  }

  async call(params: StrReplaceFileParams, ctx: ToolCallContext): Promise<ToolReturnValue> {
    const env = this.#env;
    try {
      const target = resolveFileTarget(params.path, env, "edit");
      if (!target.ok) return target.error;
      const p = target.path;
      const plan = target;

      let info: Deno.FileInfo;
      try {
        info = await Deno.stat(p);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
        if (plan.isPlanFile) {
          return toolError({
            message: "The current plan file does not exist yet. " +
              "Use WriteFile to create it before calling StrReplaceFile.",
            brief: "Plan file not created",
          });
        }
        return toolError({
          message: `\`${params.path}\` does not exist.`,
          brief: "File not found",
        });
      }
      if (!info.isFile) {
        return toolError({ message: `\`${params.path}\` is not a file.`, brief: "Invalid path" });
      }

      const edits = Array.isArray(params.edit) ? params.edit : [params.edit];
      if (edits.some((e) => e.old === "")) {
        return toolError({ message: "The `old` string cannot be empty.", brief: "Invalid edit" });
      }
      // The editor's buffer when an ACP client holds the file, else the disk.
      const files = fileBackend(env);
      const raw = await files.readText(p);
      if (raw === null) {
        return toolError({
          message: `\`${params.path}\` does not exist.`,
          brief: "File not found",
        });
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
      const refused = await approveFileChange(target, {
        env,
        ctx,
        description: `Edit file \`${p}\``,
        display: diff,
      });
      if (refused) return refused;

      await env.fileHistory?.beforeChange(p);
      try {
        const text = crlf ? content.replaceAll("\n", "\r\n") : content;
        // Checked again after the approval wait: the path must still lead where it was approved.
        const changed = confirmFileTarget(params.path, p, env) ??
          (files.name === "local"
            ? await writeResolvedFile(params.path, p, text, { append: false })
            : null);
        if (changed) return changed;
        if (files.name !== "local") await files.writeText(p, text);
      } finally {
        await env.fileHistory?.afterChange(p);
      }
      return toolOk({
        output: "",
        message: "File successfully edited. " +
          `Applied ${edits.length} edit(s) with ${replacements} total replacement(s).`,
        display: diff,
      });
    } catch (e) {
      return toolError({
        message: `Failed to edit. Error: ${e instanceof Error ? e.message : e}`,
        brief: "Failed to edit file",
      });
    }
  }
}

/** Builds the StrReplaceFile tool. */
export const strReplaceFileTool: ToolFactory = (env) => new StrReplaceFileTool(env);
