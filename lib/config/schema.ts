/**
 * The configuration file schema (`config.toml` / `config.json`), with every default, the
 * bounds of numeric settings and the cross-field checks (default model and model providers).
 *
 * Unknown keys are accepted and dropped (the legacy `skip_yolo_prompt_injection` among them);
 * `unknown_keys.ts` reports the ones a user wrote.
 * Key order of the schemas is the order used when the config is written back.
 *
 * @module
 */
import * as z from "zod";

/** Kinds of LLM provider a config may name. `google_genai` is the legacy name of `gemini`. */
export const ProviderTypeSchema = z.enum([
  "kimi",
  "openai_legacy",
  "openai_responses",
  "anthropic",
  "google_genai",
  "gemini",
  "vertexai",
  "_echo",
  "_scripted_echo",
  "_chaos",
]);
/** A provider type. */
export type ProviderType = z.infer<typeof ProviderTypeSchema>;

/** Capabilities a model may declare. */
export const ModelCapabilitySchema = z.enum([
  "image_in",
  "video_in",
  "thinking",
  "always_thinking",
]);
/** A model capability. */
export type ModelCapability = z.infer<typeof ModelCapabilitySchema>;

/** Reference to OAuth credentials kept outside the config file. */
export const OAuthRefSchema = z.object({
  storage: z.enum(["keyring", "file"]).default("file"),
  key: z.string(),
});
/** An OAuth credential reference. */
export type OAuthRef = z.infer<typeof OAuthRefSchema>;

const stringMap = z.record(z.string(), z.string());

/** One `providers.<name>` entry. */
export const ProviderConfigSchema = z.object({
  type: ProviderTypeSchema,
  base_url: z.string(),
  api_key: z.string(),
  env: stringMap.nullable().default(null),
  custom_headers: stringMap.nullable().default(null),
  reasoning_key: z.string().nullable().default(null),
  oauth: OAuthRefSchema.nullable().default(null),
});
/** An LLM provider configuration. */
export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;

/** One `models.<alias>` entry. */
export const ModelConfigSchema = z.object({
  provider: z.string(),
  model: z.string(),
  max_context_size: z.number().int(),
  capabilities: z.array(ModelCapabilitySchema)
    .transform((caps) => [...new Set(caps)])
    .nullable()
    .default(null),
  display_name: z.string().nullable().default(null),
});
/** An LLM model configuration. */
export type ModelConfig = z.infer<typeof ModelConfigSchema>;

const int = () => z.number().int();

/** `loop_control`: limits of the agent loop. `max_steps_per_run` is accepted as an alias. */
export const LoopControlSchema = z.preprocess(
  (raw) => {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
    const obj = { ...(raw as Record<string, unknown>) };
    if (obj.max_steps_per_turn === undefined && obj.max_steps_per_run !== undefined) {
      obj.max_steps_per_turn = obj.max_steps_per_run;
    }
    delete obj.max_steps_per_run;
    return obj;
  },
  z.object({
    max_steps_per_turn: int().min(1).default(1000),
    max_retries_per_step: int().min(1).default(3),
    max_ralph_iterations: int().min(-1).default(0),
    reserved_context_size: int().min(1000).default(50000),
    compaction_trigger_ratio: z.number().min(0.5).max(0.99).default(0.85),
    /** Most tool calls of one step running at once (default 16). */
    max_parallel_tool_calls: int().min(1).max(1024).optional(),
  }),
);
/** Agent loop limits. */
export type LoopControl = z.infer<typeof LoopControlSchema>;

/** `background`: background task runtime settings. */
export const BackgroundConfigSchema = z.object({
  max_running_tasks: int().min(1).default(4),
  read_max_bytes: int().min(1024).default(30000),
  notification_tail_lines: int().min(1).default(20),
  notification_tail_chars: int().min(256).default(3000),
  wait_poll_interval_ms: int().min(50).default(500),
  worker_heartbeat_interval_ms: int().min(100).default(5000),
  worker_stale_after_ms: int().min(1000).default(15000),
  kill_grace_period_ms: int().min(100).default(2000),
  keep_alive_on_exit: z.boolean().default(false),
  agent_task_timeout_s: int().min(60).default(900),
  print_wait_ceiling_s: int().min(1).default(3600),
});
/** Background task settings. */
export type BackgroundConfig = z.infer<typeof BackgroundConfigSchema>;

/** Most subagents an AgentSwarm runs at once, whatever the config says. */
export const SWARM_CONCURRENCY_CEILING = 128;

/** `swarm`: AgentSwarm settings. */
export const SwarmConfigSchema = z.object({
  max_concurrency: int().min(1).max(SWARM_CONCURRENCY_CEILING).default(8),
});
/** AgentSwarm settings. */
export type SwarmConfig = z.infer<typeof SwarmConfigSchema>;

/**
 * `notifications`: notification runtime settings. `terminal_bell` and `desktop` (this build's
 * additions) say how the shell calls for attention when an approval or a question waits or a
 * background task or goal finishes: the terminal bell, and a desktop notification sent through
 * the terminal (OSC 9, or OSC 777 where the terminal speaks that). Both only while the terminal
 * is not focused, when it reports focus.
 */
export const NotificationConfigSchema = z.object({
  claim_stale_after_ms: int().min(1000).default(15000),
  terminal_bell: z.boolean().default(true),
  desktop: z.boolean().default(true),
});
/** Notification settings. */
export type NotificationConfig = z.infer<typeof NotificationConfigSchema>;

/** `services.moonshot_search` / `services.moonshot_fetch`. */
export const ServiceConfigSchema = z.object({
  base_url: z.string(),
  api_key: z.string(),
  custom_headers: stringMap.nullable().default(null),
  oauth: OAuthRefSchema.nullable().default(null),
});
/** A Moonshot service endpoint. */
export type ServiceConfig = z.infer<typeof ServiceConfigSchema>;

/** `services`: optional Moonshot search and fetch endpoints. */
export const ServicesSchema = z.object({
  moonshot_search: ServiceConfigSchema.nullable().default(null),
  moonshot_fetch: ServiceConfigSchema.nullable().default(null),
});
/** Service endpoints. */
export type Services = z.infer<typeof ServicesSchema>;

/**
 * `model_stream`: bounds on one streamed model response. A byte limit of 0 means "sized for
 * the model": 8 bytes per token of its context window, at least 1 MiB. A response that passes a
 * limit is cut and the step fails (retryable); a stream with no data for `stall_timeout_s`
 * seconds is abandoned and retried like a lost connection.
 */
export const ModelStreamConfigSchema = z.object({
  max_text_bytes: int().min(0).default(0),
  max_thinking_bytes: int().min(0).default(0),
  max_tool_arguments_bytes: int().min(0).default(0),
  stall_timeout_s: z.number().positive().default(120),
});
/** Model stream limits. */
export type ModelStreamConfig = z.infer<typeof ModelStreamConfigSchema>;

/**
 * `mcp`: MCP client settings. `connect_timeout_ms` bounds a server's start-up and first
 * handshake; it is generous because a server fetched by `npx -y` or `deno run npm:` may
 * download its package on first start.
 */
export const MCPConfigSchema = z.object({
  client: z.object({
    tool_call_timeout_ms: int().default(60000),
    connect_timeout_ms: int().min(1000).default(180000),
  }).prefault({}),
});
/** MCP settings. */
export type MCPConfig = z.infer<typeof MCPConfigSchema>;

/**
 * `sandbox`: how shell commands are confined. When the run's write or net permission is
 * narrower than everything, Shell commands and background tasks run inside bubblewrap. When
 * bubblewrap is unavailable they are refused (fail closed) unless
 * `require_shell_confinement = false` lets them run unconfined.
 */
export const SandboxConfigSchema = z.object({
  require_shell_confinement: z.boolean().default(true),
});
/** Sandbox settings. */
export type SandboxConfig = z.infer<typeof SandboxConfigSchema>;

/**
 * `permission`: approval rules, `[[permission.rules]] pattern = "Shell(git status *)"` with
 * `decision = "allow" | "ask" | "deny"`. Entries are kept as written here; they are checked
 * when the rules load, where a bad one is reported with its line and left out. Absent unless
 * the file has it, so default config dumps stay as the reference writes them.
 */
export const PermissionConfigSchema = z.object({
  rules: z.array(z.unknown()).default([]),
});
/** Approval rule settings. */
export type PermissionConfig = z.infer<typeof PermissionConfigSchema>;

/** Lifecycle events a hook may subscribe to. */
export const HookEventSchema = z.enum([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "UserPromptSubmit",
  "Stop",
  "StopFailure",
  "SessionStart",
  "SessionEnd",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "Notification",
  "MessageDisplay",
]);
/** A hook event name. */
export type HookEvent = z.infer<typeof HookEventSchema>;

/** One `[[hooks]]` entry. `matcher` is a regex searched in the event's subject. */
export const HookDefSchema = z.object({
  event: HookEventSchema,
  command: z.string(),
  matcher: z.string().default(""),
  timeout: int().min(1).max(600).default(30),
});
/** A hook definition. */
export type HookDef = z.infer<typeof HookDefSchema>;

/** The whole configuration. */
export const ConfigSchema = z.object({
  default_model: z.string().default(""),
  default_thinking: z.boolean().default(false),
  default_yolo: z.boolean().default(false),
  skip_afk_prompt_injection: z.boolean().default(false),
  default_plan_mode: z.boolean().default(false),
  default_editor: z.string().default(""),
  theme: z.enum(["dark", "light"]).default("dark"),
  show_thinking_stream: z.boolean().default(true),
  merge_all_available_skills: z.boolean().default(true),
  extra_skill_dirs: z.array(z.string()).default([]),
  telemetry: z.boolean().default(true),
  models: z.record(z.string(), ModelConfigSchema).default({}),
  providers: z.record(z.string(), ProviderConfigSchema).default({}),
  loop_control: LoopControlSchema.prefault({}),
  background: BackgroundConfigSchema.prefault({}),
  swarm: SwarmConfigSchema.prefault({}),
  notifications: NotificationConfigSchema.prefault({}),
  services: ServicesSchema.prefault({}),
  mcp: MCPConfigSchema.prefault({}),
  model_stream: ModelStreamConfigSchema.prefault({}),
  sandbox: SandboxConfigSchema.prefault({}),
  hooks: z.array(HookDefSchema).default([]),
  permission: PermissionConfigSchema.optional(),
}).superRefine((config, ctx) => {
  if (config.default_model && !Object.hasOwn(config.models, config.default_model)) {
    ctx.addIssue({
      code: "custom",
      message: `Default model ${config.default_model} not found in models`,
      path: [],
    });
    return;
  }
  for (const model of Object.values(config.models)) {
    if (!Object.hasOwn(config.providers, model.provider)) {
      ctx.addIssue({
        code: "custom",
        message: `Provider ${model.provider} not found in providers`,
        path: [],
      });
      return;
    }
  }
});
/** The validated configuration. */
export type Config = z.infer<typeof ConfigSchema>;

/** The default configuration (what `{}` validates to). */
export function defaultConfig(): Config {
  return ConfigSchema.parse({});
}

/**
 * Validate raw config data (parsed JSON or TOML).
 *
 * @returns the config, or a secret-free description of every problem (`path: problem`, joined
 * with `; `).
 */
export function validateConfigData(
  data: unknown,
): { ok: true; config: Config } | { ok: false; problems: string } {
  const result = ConfigSchema.safeParse(data, { reportInput: true });
  if (result.success) return { ok: true, config: result.data };
  return { ok: false, problems: describeIssues(result.error.issues) };
}

/** Describe zod issues as `path: problem` phrases without ever quoting input values. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map(describeIssue).join("; ");
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? issue.path.map(String).join(".") : "";
  const problem = describeProblem(issue);
  if (!where) return issue.code === "invalid_type" ? `top level: ${problem}` : problem;
  return `${where}: ${problem}`;
}

function describeProblem(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type": {
      if (!("input" in issue) || issue.input === undefined) return "field required";
      return `expected ${typeName(issue.expected)}, got ${valueKind(issue.input)}`;
    }
    case "too_small": {
      if (issue.origin === "array" || issue.origin === "string") {
        return `must have at least ${issue.minimum} item(s)`;
      }
      return `must be ${issue.inclusive ? "greater than or equal to" : "greater than"} ${
        String(issue.minimum)
      }`;
    }
    case "too_big": {
      if (issue.origin === "array" || issue.origin === "string") {
        return `must have at most ${issue.maximum} item(s)`;
      }
      return `must be ${issue.inclusive ? "less than or equal to" : "less than"} ${
        String(issue.maximum)
      }`;
    }
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_union":
      return "does not match any accepted form";
    case "invalid_key":
      return "has an invalid key";
    case "invalid_element":
      return "has an invalid element";
    case "custom":
      return issue.message;
    default:
      return "is invalid";
  }
}

function typeName(expected: string): string {
  switch (expected) {
    case "object":
      return "a table/object";
    case "array":
      return "a list";
    case "int":
      return "an integer";
    case "number":
      return "a number";
    case "string":
      return "a string";
    case "boolean":
      return "a boolean";
    default:
      return expected;
  }
}

function valueKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a number";
  if (typeof value === "object") return "a table/object";
  return `a ${typeof value}`;
}
