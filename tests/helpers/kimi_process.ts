/**
 * Spawning `main.ts` as a user would, with an isolated HOME and share dir (the Deno cache
 * stays shared so nothing is downloaded again).
 *
 * @module
 */
import { assertSessionFilesValid, type SessionFilesCheckOptions } from "./session_files.ts";

/** Path of the entry point. */
export const MAIN_TS = new URL("../../main.ts", import.meta.url).pathname;

/** The Deno cache the children use (the parent's). */
export function denoDir(): string {
  return Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
}

/**
 * The environment of a child kimi in `sb`: its HOME and share dir, the shared Deno cache, then
 * `extra`.
 */
export function sandboxEnv(
  sb: Pick<KimiSandbox, "home" | "shareDir">,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    HOME: sb.home,
    KIMI_SHARE_DIR: sb.shareDir,
    DENO_DIR: denoDir(),
    ...extra,
  };
}

/** An isolated sandbox: home, share dir and work dir in a temp directory. */
export interface KimiSandbox {
  /** Temp root. */
  root: string;
  /** HOME of the child. */
  home: string;
  /** KIMI_SHARE_DIR of the child. */
  shareDir: string;
  /** Working directory. */
  workDir: string;
  /** Write a `_scripted_echo` config with these scripts; returns the config path. */
  scriptedConfig(scripts: string[], extra?: Record<string, unknown>): Promise<string>;
  /** Write an OpenAI-compatible config pointing at `baseUrl`; returns the config path. */
  openaiConfig(
    baseUrl: string,
    opts?: {
      type?: string;
      model?: string;
      apiKey?: string;
      capabilities?: string[];
      /** Extra top-level config keys (e.g. `loop_control`, `model_stream`). */
      extra?: Record<string, unknown>;
    },
  ): Promise<string>;
  /** Run `main.ts` with arguments. */
  run(args: string[], opts?: RunOptions): Promise<RunResult>;
  /** Paths of session dirs under the share dir. */
  sessionDirs(): Promise<string[]>;
  /** Check the session files ({@link assertSessionFilesValid}), then remove the sandbox. */
  cleanup(): Promise<void>;
}

/** Options of {@link kimiSandbox}. */
export interface KimiSandboxOptions {
  /** Parent directory of the sandbox (default the system temp dir). */
  dir?: string;
  /**
   * How `cleanup()` checks the session files: strict by default, `{ allowTorn: true }` for
   * tests that kill kimi mid-write, `false` for tests that plant broken files on purpose.
   */
  sessionFiles?: SessionFilesCheckOptions | false;
}

/** Options of a run. */
export interface RunOptions {
  /** Text for stdin (default: closed). */
  stdin?: string;
  /** Extra environment. */
  env?: Record<string, string>;
  /** Deno permission flags (default `-A`). */
  permissions?: string[];
  /** Working directory (default the sandbox work dir). */
  cwd?: string;
  /** Called with the child right after it is spawned (pid, signals). */
  onSpawn?: (child: Deno.ChildProcess) => void;
}

/** The outcome of a run. */
export interface RunResult {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Create a sandbox (under `sandboxOpts.dir`, default the system temp dir). */
export async function kimiSandbox(sandboxOpts: KimiSandboxOptions = {}): Promise<KimiSandbox> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "kimi-e2e-", dir: sandboxOpts.dir }),
  );
  const home = `${root}/home`;
  const shareDir = `${home}/.kimi`;
  const workDir = `${root}/work`;
  await Deno.mkdir(workDir, { recursive: true });
  await Deno.mkdir(home, { recursive: true });
  const sandbox: KimiSandbox = {
    root,
    home,
    shareDir,
    workDir,
    async scriptedConfig(scripts, extra = {}) {
      const scriptsPath = `${root}/scripts-${crypto.randomUUID().slice(0, 8)}.json`;
      await Deno.writeTextFile(scriptsPath, JSON.stringify(scripts));
      const config = {
        default_model: "scripted",
        models: {
          scripted: { provider: "echo", model: "scripted_echo", max_context_size: 100000 },
        },
        providers: {
          echo: {
            type: "_scripted_echo",
            base_url: "",
            api_key: "",
            env: { KIMI_SCRIPTED_ECHO_SCRIPTS: scriptsPath },
          },
        },
        ...extra,
      };
      const path = `${root}/config-${crypto.randomUUID().slice(0, 8)}.json`;
      await Deno.writeTextFile(path, JSON.stringify(config));
      return path;
    },
    async openaiConfig(baseUrl, opts = {}) {
      const config = {
        default_model: "mock",
        models: {
          mock: {
            provider: "mock",
            model: opts.model ?? "mock-model",
            max_context_size: 100000,
            ...(opts.capabilities ? { capabilities: opts.capabilities } : {}),
          },
        },
        providers: {
          mock: {
            type: opts.type ?? "openai_legacy",
            base_url: baseUrl,
            api_key: opts.apiKey ?? "sk-test",
          },
        },
        ...opts.extra,
      };
      const path = `${root}/config-${crypto.randomUUID().slice(0, 8)}.json`;
      await Deno.writeTextFile(path, JSON.stringify(config));
      return path;
    },
    async run(args, opts = {}) {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-prompt", ...(opts.permissions ?? ["-A"]), MAIN_TS, ...args],
        cwd: opts.cwd ?? workDir,
        clearEnv: true,
        env: {
          HOME: home,
          KIMI_SHARE_DIR: shareDir,
          DENO_DIR: denoDir(),
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          NO_COLOR: "1",
          ...opts.env,
        },
        stdin: opts.stdin === undefined ? "null" : "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      opts.onSpawn?.(child);
      if (opts.stdin !== undefined) {
        const w = child.stdin.getWriter();
        await w.write(new TextEncoder().encode(opts.stdin));
        await w.close();
      }
      const out = await child.output();
      return {
        code: out.code,
        stdout: new TextDecoder().decode(out.stdout),
        stderr: new TextDecoder().decode(out.stderr),
      };
    },
    async sessionDirs() {
      const dirs: string[] = [];
      try {
        for await (const wd of Deno.readDir(`${shareDir}/sessions`)) {
          for await (const s of Deno.readDir(`${shareDir}/sessions/${wd.name}`)) {
            dirs.push(`${shareDir}/sessions/${wd.name}/${s.name}`);
          }
        }
      } catch {
        // none yet
      }
      return dirs;
    },
    async cleanup() {
      try {
        if (sandboxOpts.sessionFiles !== false) {
          await assertSessionFilesValid(shareDir, sandboxOpts.sessionFiles ?? {});
        }
      } finally {
        await Deno.remove(root, { recursive: true }).catch(() => {});
      }
    },
  };
  return sandbox;
}

/** Build a `tool_call:` DSL line. */
export function toolCallLine(id: string, name: string, args: Record<string, unknown>): string {
  return `tool_call: ${JSON.stringify({ id, name, arguments: JSON.stringify(args) })}`;
}
