/**
 * Loading and saving the configuration: the default `<share>/config.toml` (with the one-time
 * migration from the legacy `config.json`), an explicit `--config-file` (JSON or TOML by
 * extension) or inline `--config` text (JSON first, then TOML).
 *
 * Error messages never quote the configuration text, so secrets cannot leak through them.
 *
 * @module
 */
import { exists } from "../fs/exists.ts";
import { dirname, extname, join, resolve } from "node:path";
import { parse as parseToml, stringify as stringifyToml, TomlError } from "smol-toml";
import { looksBinary } from "../excerpt.ts";
import { atomicWriteText } from "../fs/atomic_write.ts";
import { ConfigError } from "./errors.ts";
import { describeJsonSyntaxError } from "./json_syntax.ts";
import { type Config, ConfigSchema, defaultConfig, validateConfigData } from "./schema.ts";
import { describeFsError } from "./share_dir.ts";
import { unsupportedConfigNotices } from "./unsupported.ts";
import { unknownConfigKeyNotices } from "./unknown_keys.ts";

export { ConfigError } from "./errors.ts";

/** Where to load the configuration from. */
export interface LoadConfigOptions {
  /** The share dir; the default file is `<shareDir>/config.toml`. */
  shareDir: string;
  /** `--config-file`: a JSON (`.json`) or TOML file. Created with defaults when missing. */
  configFile?: string;
  /** `--config`: inline JSON or TOML text. */
  configText?: string;
}

/** A loaded configuration and the file it came from (`null` for inline text). */
export interface LoadedConfig {
  /** The validated configuration. */
  config: Config;
  /** Absolute path of the source file, or `null` when loaded from `--config` text. */
  path: string | null;
  /**
   * Keys the user set that this build does not act on or does not know, one line each (report
   * them once).
   */
  notices?: string[];
}

/**
 * Load the configuration.
 *
 * - `configText` → parsed as JSON, else TOML (`Config cannot be empty`,
 *   `Invalid configuration text: <json err>; <toml err>`).
 * - otherwise `configFile` or `<shareDir>/config.toml`. A missing default file is migrated from
 *   a legacy `config.json` (renamed `config.json.bak`) or written with the defaults.
 *
 * @throws {ConfigError} with the exact user-facing message.
 */
export async function loadConfig(opts: LoadConfigOptions): Promise<LoadedConfig> {
  if (opts.configText !== undefined && opts.configFile !== undefined) {
    throw new ConfigError("Cannot combine --config, --config-file.");
  }
  if (opts.configText !== undefined) {
    const config = loadConfigFromText(opts.configText);
    return {
      config,
      path: null,
      notices: configNotices(parseConfigText(opts.configText)),
    };
  }
  const defaultFile = resolve(defaultConfigPath(opts.shareDir));
  const file = opts.configFile !== undefined ? resolve(opts.configFile) : defaultFile;

  if (file === defaultFile && !(await configFileExists(file))) {
    await migrateLegacyJsonConfig(opts.shareDir, file);
  }
  if (!(await configFileExists(file))) {
    const config = defaultConfig();
    await saveConfig(config, file);
    return { config, path: file };
  }

  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    throw new ConfigError(`Cannot read configuration file ${file}: ${describeFsError(err)}`, {
      cause: err,
    });
  }
  if (looksBinary(text)) {
    throw new ConfigError(
      `Configuration file ${file} is not a text file (it holds binary data). Point ` +
        "--config-file at a TOML or JSON file.",
    );
  }
  const isJson = extname(file).toLowerCase() === ".json";
  let data: unknown;
  if (isJson) {
    try {
      data = JSON.parse(text);
    } catch {
      throw new ConfigError(
        `Invalid JSON in configuration file ${file}: ${describeJsonSyntaxError(text)}`,
      );
    }
  } else {
    try {
      data = parseToml(text);
    } catch (err) {
      throw new ConfigError(
        `Invalid TOML in configuration file ${file}: ${describeTomlError(err)}`,
      );
    }
  }
  const result = validateConfigData(data);
  if (!result.ok) {
    throw new ConfigError(`Invalid configuration file ${file}: ${result.problems}`);
  }
  return { config: result.config, path: file, notices: configNotices(data) };
}

/** Notices about keys of valid raw config `data`: unsupported values, then unknown keys. */
function configNotices(data: unknown): string[] {
  return [...unsupportedConfigNotices(data), ...unknownConfigKeyNotices(ConfigSchema, data)];
}

/**
 * Parse `--config` text: JSON first, then TOML.
 *
 * @throws {ConfigError} `Config cannot be empty`, `Invalid configuration text: ...`.
 */
export function loadConfigFromText(text: string): Config {
  if (!text.trim()) throw new ConfigError("Config cannot be empty");
  const data = parseConfigText(text);
  const result = validateConfigData(data);
  if (!result.ok) throw new ConfigError(`Invalid configuration text: ${result.problems}`);
  return result.config;
}

/** `--config` text as data: JSON first, then TOML. */
function parseConfigText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const jsonError = describeJsonSyntaxError(text);
    try {
      return parseToml(text);
    } catch (err) {
      throw new ConfigError(
        `Invalid configuration text: ${jsonError}; ${describeTomlError(err)}`,
      );
    }
  }
}

/** Path of the default config file in a share dir. */
export function defaultConfigPath(shareDir: string): string {
  return join(shareDir, "config.toml");
}

/**
 * Serialize a configuration: JSON with 2-space indent, or TOML. `null` values are omitted.
 * Secrets are written in clear text (the file is the user's own credential store).
 */
export function serializeConfig(config: Config, format: "json" | "toml"): string {
  const data = withoutNulls(config) as Record<string, unknown>;
  return format === "json" ? JSON.stringify(data, null, 2) : stringifyToml(data);
}

/**
 * Write a configuration to `path` atomically (mode 0600, since it may hold API keys):
 * JSON when the file name ends in `.json`, TOML otherwise. Parent directories are created.
 */
export async function saveConfig(config: Config, path: string): Promise<void> {
  const format = extname(path).toLowerCase() === ".json" ? "json" : "toml";
  await Deno.mkdir(dirname(resolve(path)), { recursive: true });
  await atomicWriteText(path, serializeConfig(config, format), { mode: 0o600 });
}

async function migrateLegacyJsonConfig(shareDir: string, target: string): Promise<void> {
  const legacy = join(shareDir, "config.json");
  if (!(await configFileExists(legacy))) return;
  let text: string;
  try {
    text = await Deno.readTextFile(legacy);
  } catch (err) {
    throw new ConfigError(
      `Cannot read legacy configuration file ${legacy}: ${describeFsError(err)}`,
      { cause: err },
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ConfigError(
      `Invalid JSON in legacy configuration file ${legacy}: ${describeJsonSyntaxError(text)}`,
    );
  }
  const result = validateConfigData(data);
  if (!result.ok) {
    throw new ConfigError(`Invalid legacy configuration file ${legacy}: ${result.problems}`);
  }
  await saveConfig(result.config, target);
  await Deno.rename(legacy, join(shareDir, "config.json.bak"));
}

async function configFileExists(path: string): Promise<boolean> {
  try {
    return await exists(path);
  } catch (err) {
    throw new ConfigError(`Cannot access configuration file ${path}: ${describeFsError(err)}`, {
      cause: err,
    });
  }
}

/** First line of a smol-toml error plus its position; the source excerpt is dropped. */
function describeTomlError(err: unknown): string {
  if (err instanceof TomlError) {
    const head = err.message.split("\n")[0].replace(/^Invalid TOML document:\s*/, "");
    return `${head} at line ${err.line}, column ${err.column}`;
  }
  return "Invalid TOML";
}

function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === null || v === undefined) continue;
      out[k] = withoutNulls(v);
    }
    return out;
  }
  return value;
}
