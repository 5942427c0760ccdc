/**
 * Grep: regular-expression search over file contents with ripgrep's semantics. Runs the bundled
 * `rg` binary when this run may execute it, else the pure-TS engine; both feed the same
 * post-processing, so the result does not depend on the engine.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset, renderTemplate } from "../lib/assets/mod.ts";
import { finishGrep } from "../lib/search/grep_output.ts";
import {
  GREP_TIMEOUT_MS,
  type GrepEngineOptions,
  type GrepQuery,
  type GrepRun,
} from "../lib/search/grep_query.ts";
import { findRipgrep, runRipgrep } from "../lib/search/ripgrep.ts";
import { integer, orNull } from "../lib/tooling/param_types.ts";
import { toolError } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import { controlMatcher } from "../lib/tooling/control_paths.ts";
import { resolveRealPath } from "../lib/fs/real_path.ts";
import { ResultFilter } from "../lib/tooling/result_filter.ts";
import { denialMessage } from "../lib/tooling/scope.ts";
import { isProcessProcPath } from "../lib/tooling/sensitive.ts";
import { expandHome } from "../lib/tooling/workspace.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Default cap on returned lines or entries. */
export const DEFAULT_HEAD_LIMIT = 250;

/** Grep parameters (JSON names as the model sends them). */
export const grepParamsSchema = lazyValue(() =>
  z.object({
    pattern: z.string().describe("Regular expression to search file contents for."),
    path: z.string().default(".").describe(
      "File or directory to search (absolute when set); default: the working directory.",
    ),
    glob: orNull(z.string()).default(null).describe(
      "Only search files matching this glob, e.g. `*.ts` or `*.{js,jsx}`.",
    ),
    output_mode: z.string().default("files_with_matches").describe(
      "`files_with_matches` lists matching paths; `content` shows matching lines (with `-A`, " +
        "`-B`, `-C`, `-n`); `count_matches` counts matches per file.",
    ),
    "-B": orNull(integer()).default(null).describe(
      "Lines of context before each match (`content` mode).",
    ),
    "-A": orNull(integer()).default(null).describe(
      "Lines of context after each match (`content` mode).",
    ),
    "-C": orNull(integer()).default(null).describe(
      "Lines of context around each match (`content` mode).",
    ),
    "-n": z.boolean().default(true).describe(
      "Prefix matching lines with line numbers (`content` mode).",
    ),
    "-i": z.boolean().default(false).describe("Match without regard to letter case."),
    type: orNull(z.string()).default(null).describe(
      "Only search files of this ripgrep type, e.g. `py`, `rust`, `ts`, `go` (faster than " +
        "`glob`).",
    ),
    head_limit: orNull(integer().min(0)).default(DEFAULT_HEAD_LIMIT).describe(
      "Return at most this many lines or entries (like `| head -N`); 0 = no limit (can flood " +
        "the context).",
    ),
    offset: integer().min(0).default(0).describe(
      "Skip this many lines or entries before `head_limit` applies, to page through results.",
    ),
    multiline: z.boolean().default(false).describe(
      "Let matches span lines, with `.` matching line breaks (`-U --multiline-dotall`).",
    ),
    include_ignored: z.boolean().default(false).describe(
      "Also search files excluded by `.gitignore`/`.ignore` rules (e.g. `node_modules`); " +
        "secret files stay excluded.",
    ),
  })
);
/** Grep parameters. */
export type GrepParams = z.infer<ReturnType<typeof grepParamsSchema>>;

/** Which engine a Grep call uses. */
export type GrepEngine = "ripgrep" | "typescript";

/** The query a Grep call runs, from its parameters. */
export function grepQuery(params: GrepParams, workDir: string): GrepQuery {
  return {
    pattern: params.pattern,
    path: expandHome(params.path),
    cwd: workDir,
    glob: params.glob,
    outputMode: params.output_mode,
    before: params["-B"],
    after: params["-A"],
    context: params["-C"],
    lineNumber: params["-n"],
    ignoreCase: params["-i"],
    type: params.type,
    multiline: params.multiline,
    includeIgnored: params.include_ignored,
  };
}

/** Options of {@link grepToolWith}, for tests and benchmarks. */
export interface GrepToolOptions {
  /** Force an engine (default: ripgrep when allowed and available). */
  engine?: GrepEngine;
  /** Search timeout (default 20 s). */
  timeoutMs?: number;
}

/** Builds the Grep tool with explicit engine options. */
export function grepToolWith(opts: GrepToolOptions): ToolFactory {
  return (env): Tool<GrepParams> => ({
    name: "Grep",
    description: renderTemplate(readAsset("tools/grep.md"), {
      DEFAULT_HEAD_LIMIT: String(DEFAULT_HEAD_LIMIT),
    }),
    get parameters() {
      return grepParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.Grep,
    resolve: (params) => ({
      execute: async (ctx) => {
        try {
          const q = grepQuery(params, env.workDir);
          // The search root, resolved to where it really leads and checked before the search.
          const root = resolveRealPath(q.path, env.workDir);
          if (!root.ok && root.reason === "permission") {
            return toolError({ message: denialMessage("read", root.at), brief: "Sandbox denied" });
          }
          const secret = controlMatcher(env.run.controlPaths.list().filter((c) => c.secret));
          const rootPath = root.ok ? root.path : null;
          if (rootPath !== null) {
            const cp = secret(rootPath);
            if (isProcessProcPath(rootPath) || cp) {
              return toolError({
                message: `\`${params.path}\` leads to \`${rootPath}\`, ${
                  cp ? cp.what : "a process's /proc entry (environment, memory)"
                }. Searching it is blocked to protect credentials; no counts or matches are given.`,
                brief: "Sensitive file",
              });
            }
            const decision = env.scope.check("read", rootPath);
            if (!decision.allowed) {
              return toolError({ message: decision.message, brief: "Sandbox denied" });
            }
          }
          const timeoutMs = opts.timeoutMs ?? GREP_TIMEOUT_MS;
          const engineOpts: GrepEngineOptions = { signal: ctx.signal, timeoutMs };
          const rg = await ripgrepPath(env, opts);
          const run: GrepRun = rg
            ? await runRipgrep(rg, q, { ...engineOpts, env: env.childEnv() })
            : await (await import("../lib/search/ts_grep.ts")).runTsGrep(q, engineOpts);
          // Each result is resolved again after the search (a symlink may have been swapped in).
          const results = new ResultFilter(env);
          return finishGrep(run, q, {
            headLimit: params.head_limit,
            offset: params.offset,
            controls: env.run.controlPaths.list(),
            timeoutMs,
            checkPath: (abs) => results.verdict(abs),
          });
        } catch (e) {
          ctx.signal.throwIfAborted();
          return toolError({
            message: `Failed to grep. Error: ${e instanceof Error ? e.message : e}`,
            brief: "Failed to grep",
          });
        }
      },
    }),
  });
}

/** The ripgrep binary to run, or null for the pure-TS engine. */
async function ripgrepPath(env: ToolEnv, opts: GrepToolOptions): Promise<string | null> {
  if (opts.engine === "typescript") return null;
  const path = await findRipgrep();
  if (path === null || !env.scope.check("run", path).allowed) {
    if (opts.engine === "ripgrep") throw new Error("ripgrep is not available to this run");
    return null;
  }
  return path;
}

/** Builds the Grep tool. */
export const grepTool: ToolFactory = grepToolWith({});
