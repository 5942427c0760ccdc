/**
 * WriteFile: overwrite or append to a file after the user approves the diff.
 *
 * @module
 */
import { pathStatus } from "../lib/fs/exists.ts";
import { dirname } from "node:path";
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { buildDiffBlocks } from "../lib/tooling/diff_blocks.ts";
import { fileBackend } from "../lib/tooling/file_backend.ts";
import {
  confirmFileTarget,
  fileChangeApproval,
  resolveFileTarget,
  writeResolvedFile,
} from "../lib/tooling/file_target.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolFactory } from "../lib/tooling/tool.ts";
import type { DisplayBlock } from "../lib/wire/display.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** WriteFile parameters. */
export const writeFileParamsSchema = lazyValue(() =>
  z.object({
    path: z.string().describe(
      "Path of the file to write. Relative paths are resolved against the working directory; " +
        "files outside it need an absolute path.",
    ),
    content: z.string().describe("The text to write."),
    mode: z.enum(["overwrite", "append"]).default("overwrite").describe(
      "`overwrite` replaces the whole file with `content`; `append` adds `content` after the " +
        "existing text.",
    ),
  })
);
/** WriteFile parameters. */
export type WriteFileParams = z.infer<ReturnType<typeof writeFileParamsSchema>>;

/** Builds the WriteFile tool. */
export const writeFileTool: ToolFactory = (env): Tool<WriteFileParams> => ({
  name: "WriteFile",
  description: readAsset("tools/write_file.md"),
  get parameters() {
    return writeFileParamsSchema();
  },
  jsonSchema: PARAM_JSON_SCHEMAS.WriteFile,
  isRoot: env.isRoot,
  resolve(params) {
    const failed = (e: unknown) =>
      toolError({
        message: `Failed to write to ${params.path}. Error: ${e instanceof Error ? e.message : e}`,
        brief: "Failed to write file",
      });
    let target;
    try {
      target = resolveFileTarget(params.path, env, "write");
    } catch (e) {
      return failed(e);
    }
    if (!target.ok) return target.error;
    const p = target.path;
    // A secret file's old content never goes into the diff (approval, wire.jsonl) or undo.
    const secret = target.control?.secret ?? false;
    // The editor's buffer when an ACP client holds the file, else the disk.
    const files = fileBackend(env);
    let diff: DisplayBlock[] = [];
    return {
      accesses: [{ kind: "write", path: p, snapshot: !secret }],
      async approval() {
        try {
          // (The plan file's folder is made when it is written.)
          if (!target.isPlanFile && (await pathStatus(dirname(p))) !== "directory") {
            return toolError({
              message: `\`${params.path}\` parent directory does not exist.`,
              brief: "Parent directory not found",
            });
          }
          const oldText = secret ? null : await files.readText(p);
          const newText = params.mode === "overwrite"
            ? params.content
            : (oldText ?? "") + params.content;
          diff = await buildDiffBlocks(p, oldText ?? "", newText);
          return fileChangeApproval(target, {
            env,
            description: `Write file \`${p}\``,
            display: diff,
          });
        } catch (e) {
          return failed(e);
        }
      },
      async execute() {
        try {
          if (target.isPlanFile) await Deno.mkdir(dirname(p), { recursive: true });
          const append = params.mode === "append";
          // Checked again after the approval wait: the path must still lead where it was approved.
          const changed = confirmFileTarget(params.path, p, env) ??
            (files.name === "local"
              ? await writeResolvedFile(params.path, p, params.content, { append })
              : null);
          if (changed) return changed;
          const size = files.name === "local"
            ? (await Deno.stat(p)).size
            : await files.writeText(p, params.content, { append });
          const verb = params.mode === "overwrite" ? "overwritten" : "appended to";
          return toolOk({
            output: "",
            message: `File successfully ${verb}. Current size: ${size} bytes.`,
            display: diff,
          });
        } catch (e) {
          return failed(e);
        }
      },
    };
  },
});
