/**
 * A plugin's tool offered to the model (reference §A3): its bare name, description and JSON
 * Schema; each call is refused when its process cannot be confined as required, asks approval
 * `plugin:<name>`, then runs the tool's command in the plugin
 * directory with the arguments as JSON on stdin (see tool_process.ts) and returns its stdout.
 *
 * @module
 */
import * as z from "zod";
import { log } from "../log.ts";
import { describeArguments } from "../tooling/argument_preview.ts";
import { toolError, toolOk, ToolResultBuilder } from "../tooling/result.ts";
import type { Tool } from "../tooling/tool.ts";
import { brief } from "../wire/display.ts";
import type { PluginToolSpec } from "./manifest.ts";
import { runPluginProcess } from "./tool_process.ts";
import type { CommandWrapper } from "../process/command_wrapper.ts";

/** The fixed timeout of a plugin tool call. */
export const PLUGIN_TOOL_TIMEOUT_MS = 120_000;
/** Most stdout/stderr bytes kept from one call (the model gets at most the usual cap). */
export const PLUGIN_OUTPUT_MAX_BYTES = 1024 * 1024;

/** Options of {@link pluginTool}. */
export interface PluginToolOptions {
  /** Plugin name. */
  readonly plugin: string;
  /** The installed plugin's directory (the command's cwd). */
  readonly dir: string;
  /** The tool entry. */
  readonly spec: PluginToolSpec;
  /** The session's command wrapper (its sandbox plan), read per call. */
  readonly wrapper: () => CommandWrapper;
  /** The environment for the process (the user's, without the agent's secrets). */
  readonly childEnv: () => Record<string, string>;
  /** The `inject` variables, resolved fresh for each call: variable name → value. */
  readonly injectEnv: () => Promise<Record<string, string>>;
  /** Control paths this plugin's process may see (its config file). */
  readonly reveal: readonly string[];
  /** Whether the tool belongs to the root agent (rejection wording). */
  readonly isRoot: boolean;
  /**
   * Why processes may not run in this run (confinement required but unavailable), read before
   * each call; the call then fails with it, as Shell does.
   */
  readonly refusal?: () => string | undefined;
  /** Timeout override (tests); default {@link PLUGIN_TOOL_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
}

const ArgsSchema = z.record(z.string(), z.unknown());

/** Wrap a plugin's tool entry as a {@link Tool}. */
export function pluginTool(opts: PluginToolOptions): Tool<Record<string, unknown>> {
  const { spec } = opts;
  const schema = Object.keys(spec.parameters).length === 0
    ? { type: "object", properties: {} }
    : { type: "object", ...spec.parameters };
  const timeoutMs = opts.timeoutMs ?? PLUGIN_TOOL_TIMEOUT_MS;
  return {
    name: spec.name,
    description: spec.description,
    parameters: ArgsSchema,
    jsonSchema: schema,
    isRoot: opts.isRoot,
    resolve: (args) => {
      // Processes that cannot be confined as required are refused before any approval.
      const refusal = opts.refusal?.();
      if (refusal) return toolError({ message: refusal, brief: "Not sandboxed" });
      return {
        approval: () => ({
          action: `plugin:${spec.name}`,
          description: `Run plugin tool \`${spec.name}\` of plugin \`${opts.plugin}\` with ${
            describeArguments(args)
          }.`,
          display: [
            brief(
              `Plugin: ${opts.plugin}\nTool: ${spec.name}\nCommand: ${
                spec.command.join(" ")
              }\nArguments: ${JSON.stringify(args, null, 2)}`,
            ),
          ],
          subject: { kind: "plugin", tool: spec.name },
        }),
        execute: async (ctx) => {
          const env = { ...opts.childEnv(), ...(await opts.injectEnv()) };
          const result = await runPluginProcess({
            wrapper: opts.wrapper(),
            argv: spec.command,
            cwd: opts.dir,
            env,
            input: new TextEncoder().encode(JSON.stringify(args)),
            timeoutMs,
            signal: ctx.signal,
            maxBytes: PLUGIN_OUTPUT_MAX_BYTES,
            reveal: opts.reveal,
          });
          if (result.kind === "aborted") throw ctx.signal.reason ?? new Error("cancelled");
          if (result.kind === "timeout") {
            log("WARNING", "plugins", `Plugin tool ${spec.name} timed out`);
            return toolError({
              message: `Plugin tool '${spec.name}' timed out after ${
                Math.round(timeoutMs / 1000)
              }s.`,
              brief: "Timeout",
            });
          }
          const decode = (b: Uint8Array) => new TextDecoder().decode(b).trim();
          const stdout = decode(result.stdout);
          if (result.stderr.length > 0) {
            log("DEBUG", "plugins", `${spec.name} stderr: ${result.stderr.length} bytes`);
          }
          const out = new ToolResultBuilder();
          if (result.code !== 0) {
            const why = decode(result.stderr) || stdout || `Exit code ${result.code}`;
            out.write(why);
            const text = out.text();
            return toolError({
              message: `Plugin tool '${spec.name}' failed: ${text}` +
                (out.truncated ? " (output truncated)" : ""),
              brief: `Exit ${result.code}`,
            });
          }
          out.write(stdout);
          return toolOk({
            output: out.text(),
            message: out.truncated || result.truncated
              ? "Output is truncated to fit in the message."
              : "",
          });
        },
      };
    },
  };
}
