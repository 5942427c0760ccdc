/**
 * Glob: list files and directories matching a pathlib-style glob pattern inside the workspace.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset, renderTemplate } from "../lib/assets/mod.ts";
import { FirstPaths, pathGlob } from "../lib/search/path_glob.ts";
import { findFindBinary, findWalker, type SubtreeWalker } from "../lib/search/native_walk.ts";
import { listWorkDir } from "../lib/agent/work_dir_listing.ts";
import { orNull } from "../lib/tooling/param_types.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import { resolveRealPath } from "../lib/fs/real_path.ts";
import { ResultFilter } from "../lib/tooling/result_filter.ts";
import { expandHome, isInsideWorkspace } from "../lib/tooling/workspace.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Most matches returned. */
export const MAX_MATCHES = 1000;

/** Glob parameters. */
export const globParamsSchema = lazyValue(() =>
  z.object({
    pattern: z.string().describe("The glob pattern files or directories must match."),
    directory: orNull(z.string()).default(null).describe(
      "Absolute path of the directory to search from; the working directory when omitted.",
    ),
    include_dirs: z.boolean().default(true).describe(
      "Whether directories are listed along with files.",
    ),
  })
);
/** Glob parameters. */
export type GlobParams = z.infer<ReturnType<typeof globParamsSchema>>;

async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** Options of {@link globToolWith}, for tests and benchmarks. */
export interface GlobToolOptions {
  /** How a `**` is walked: by GNU find when allowed and available (default), or by `readDir`. */
  walk?: "find" | "readDir";
  /** Finds one walk runs at once (default: one per core, at most 4). */
  findProcesses?: number;
}

/**
 * The native walker for a `**` pattern: GNU find from a system directory, when this run may
 * start it (the `--allow-run` floor, never prompting); otherwise none (the `readDir` walk).
 */
function nativeWalker(
  env: ToolEnv,
  pattern: string,
  opts: GlobToolOptions,
): SubtreeWalker | undefined {
  if (opts.walk === "readDir" || !pattern.split("/").includes("**")) return undefined;
  const find = findFindBinary();
  return find !== null && env.scope.check("run", find).allowed
    ? findWalker(find, { processes: opts.findProcesses })
    : undefined;
}

function glob(env: ToolEnv, opts: GlobToolOptions): Tool<GlobParams> {
  return {
    name: "Glob",
    description: renderTemplate(readAsset("tools/glob.md"), {
      MAX_MATCHES: String(MAX_MATCHES),
    }),
    get parameters() {
      return globParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.Glob,
    resolve: (params) => ({
      execute: async (ctx) => {
        try {
          // `./**/x` and `.//**` walk the same tree as `**/x`: leading `.` segments are skipped.
          if (/^(?:\.?\/+)*\*\*/.test(params.pattern)) {
            const decision = env.scope.check("read", env.workDir);
            return toolError({
              output: decision.allowed ? await listWorkDir(env.workDir) : "",
              message: `Pattern \`${params.pattern}\` starts with '**' which is not allowed. ` +
                "This would recursively search all directories and may include large directories " +
                "like `node_modules`. Use more specific patterns instead. For your convenience, a " +
                "list of all files and directories in the top level of the working directory is " +
                "provided below.",
              brief: "Unsafe pattern",
            });
          }
          const shownDir = params.directory ?? env.workDir;
          const expanded = params.directory ? expandHome(params.directory) : env.workDir;
          if (!isAbsolute(expanded)) {
            return toolError({
              message: `\`${params.directory}\` is not an absolute path. ` +
                "You must provide an absolute path to search.",
              brief: "Invalid directory",
            });
          }
          const real = resolveRealPath(expanded, env.workDir);
          if (!real.ok) {
            return toolError({
              message: `\`${shownDir}\` cannot be resolved safely (\`${real.at}\` is ` +
                (real.reason === "symlink" ? "a dangling symlink)." : "not readable in this run)."),
              brief: "Invalid directory",
            });
          }
          const dir = real.path;
          if (!isInsideWorkspace(dir, env)) {
            return toolError({
              message: `\`${shownDir}\` is outside the workspace. You can only search within the ` +
                "working directory, additional directories, and skills directories.",
              brief: "Directory outside workspace",
            });
          }
          const decision = env.scope.check("read", dir);
          if (!decision.allowed) {
            return toolError({ message: decision.message, brief: "Sandbox denied" });
          }
          const info = await statOrNull(dir);
          if (!info) {
            return toolError({
              message: `\`${shownDir}\` does not exist.`,
              brief: "Directory not found",
            });
          }
          if (!info.isDirectory) {
            return toolError({
              message: `\`${shownDir}\` is not a directory.`,
              brief: "Invalid directory",
            });
          }

          const plainDirs = new Set<string>();
          // Each match is resolved: `..` in the pattern or a symlinked directory cannot lead out.
          // The plain entries of a directory are judged once for all as the walk finds them.
          // (The filter is built at the first match, while find runs, not before it starts.)
          let filter: ResultFilter | undefined;
          const results = () =>
            filter ??= new ResultFilter(env, { workspaceOnly: true, plainDirs });
          // (Joined by hand where `join` has nothing to normalize: it costs a microsecond each.)
          const base = dir.endsWith("/") ? dir : dir + "/";
          let dropped = 0;
          // Only the first MAX_MATCHES are shown: only those are kept in order, as found.
          const first = new FirstPaths(MAX_MATCHES);
          await pathGlob(dir, params.pattern, {
            signal: ctx.signal,
            filesOnly: !params.include_dirs,
            plainDirs,
            walker: nativeWalker(env, params.pattern, opts),
            judge: {
              plainEntriesOk: (d) => results().plainEntriesOk(d),
              keep: (m, plainEntry) => {
                const ok = results().verdict(m.includes("..") ? join(dir, m) : base + m, {
                  plainEntry,
                }) === "ok";
                if (!ok) dropped++;
                return ok;
              },
            },
            into: first,
          });
          const total = first.length;
          const matches = first.sorted();
          let message = total > 0
            ? `Found ${total} matches for pattern \`${params.pattern}\`.`
            : `No matches found for pattern \`${params.pattern}\`.`;
          if (dropped > 0) {
            message += ` Left out ${dropped} match(es) that lead outside the workspace or this ` +
              "run's read scope, or onto kimi's own secret files.";
          }
          if (total > MAX_MATCHES) {
            message += ` Only the first ${MAX_MATCHES} matches are returned. ` +
              "You may want to use a more specific pattern.";
          }
          return toolOk({ output: matches.join("\n"), message });
        } catch (e) {
          ctx.signal.throwIfAborted();
          return toolError({
            message: `Failed to search for pattern ${params.pattern}. Error: ${
              e instanceof Error ? e.message : e
            }`,
            brief: "Glob failed",
          });
        }
      },
    }),
  };
}

/** Builds the Glob tool with explicit walk options. */
export function globToolWith(opts: GlobToolOptions): ToolFactory {
  return (env) => glob(env, opts);
}

/** Builds the Glob tool. */
export const globTool: ToolFactory = globToolWith({});
