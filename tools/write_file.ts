/**
 * WriteFile: overwrite or append to a file after the user approves the diff.
 *
 * @module
 */
import { pathStatus } from "../lib/fs/exists.ts";
import { dirname } from "node:path";
import { z } from "zod";
import { readAsset } from "../lib/assets/mod.ts";
import { buildDiffBlocks } from "../lib/tooling/diff_blocks.ts";
import { editAction } from "../lib/tooling/file_actions.ts";
import { resolveFileTarget } from "../lib/tooling/file_target.ts";
import { toolError, toolOk, toolRejected } from "../lib/tooling/result.ts";
import type {
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolFactory,
  ToolReturnValue,
} from "../lib/tooling/tool.ts";

/** WriteFile parameters. */
export const WriteFileParamsSchema = z.object({
  path: z.string().describe(
    "Path of the file to write. Relative paths are resolved against the working directory; " +
      "files outside it need an absolute path.",
  ),
  content: z.string().describe("The text to write."),
  mode: z.enum(["overwrite", "append"]).default("overwrite").describe(
    "`overwrite` replaces the whole file with `content`; `append` adds `content` after the " +
      "existing text.",
  ),
});
/** WriteFile parameters. */
export type WriteFileParams = z.infer<typeof WriteFileParamsSchema>;

/** Read a file as UTF-8 (invalid bytes replaced), or `null` when it does not exist. */
export async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return new TextDecoder().decode(await Deno.readFile(path));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

class WriteFileTool implements Tool<WriteFileParams> {
  readonly name = "WriteFile";
  readonly description = readAsset("tools/write_file.md");
  readonly parameters = WriteFileParamsSchema;
  readonly #env: ToolEnv;

  constructor(env: ToolEnv) {
    this.#env = env;
  }

  async call(params: WriteFileParams, ctx: ToolCallContext): Promise<ToolReturnValue> {
    const env = this.#env;
    try {
      const target = resolveFileTarget(params.path, env, "write");
      if (!target.ok) return target.error;
      const p = target.path;
      const plan = target;
      if (plan.isPlanFile) await Deno.mkdir(dirname(p), { recursive: true });
      if (!((await pathStatus(dirname(p))) === "directory")) {
        return toolError({
          message: `\`${params.path}\` parent directory does not exist.`,
          brief: "Parent directory not found",
        });
      }

      const oldText = await readTextOrNull(p);
      const newText = params.mode === "overwrite"
        ? params.content
        : (oldText ?? "") + params.content;
      const diff = buildDiffBlocks(p, oldText ?? "", newText);

      if (!plan.isPlanFile) {
        const outcome = await ctx.requestApproval({
          action: editAction(target.inside),
          description: `Write file \`${p}\``,
          display: diff,
          subject: { kind: "file", path: p },
        });
        if (!outcome.approved) {
          return toolRejected(outcome.feedback, { isRoot: env.isRoot, denial: outcome.denial });
        }
      }

      await env.fileHistory?.beforeChange(p);
      try {
        await Deno.writeTextFile(p, params.content, { append: params.mode === "append" });
      } finally {
        await env.fileHistory?.afterChange(p);
      }
      const size = (await Deno.stat(p)).size;
      const verb = params.mode === "overwrite" ? "overwritten" : "appended to";
      return toolOk({
        output: "",
        message: `File successfully ${verb}. Current size: ${size} bytes.`,
        display: diff,
      });
    } catch (e) {
      return toolError({
        message: `Failed to write to ${params.path}. Error: ${e instanceof Error ? e.message : e}`,
        brief: "Failed to write file",
      });
    }
  }
}

/** Builds the WriteFile tool. */
export const writeFileTool: ToolFactory = (env) => new WriteFileTool(env);
