/**
 * The environment benchmark children run in: an isolated HOME and KIMI_SHARE_DIR in a temp
 * dir, but the parent's Deno cache (DENO_DIR), so children never re-download npm packages.
 *
 * @module
 */

/** Absolute path of the repository root (the directory holding `main.ts`). */
export const REPO_ROOT: string = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** Absolute path of `main.ts`. */
export const MAIN_TS: string = `${REPO_ROOT}/main.ts`;

let cachedDenoDir: string | undefined;

/**
 * The Deno cache directory of this process: `DENO_DIR` when set, else the one `deno info`
 * reports (which honours XDG_CACHE_HOME), else `$HOME/.cache/deno`.
 */
export async function denoCacheDir(): Promise<string> {
  if (cachedDenoDir) return cachedDenoDir;
  const fromEnv = Deno.env.get("DENO_DIR");
  if (fromEnv) return (cachedDenoDir = fromEnv);
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const info = JSON.parse(new TextDecoder().decode(out.stdout));
    if (typeof info.denoDir === "string") return (cachedDenoDir = info.denoDir as string);
  } catch {
    // fall through to the default location
  }
  return (cachedDenoDir = `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`);
}

/** A temp dir for one benchmark child, with the environment to give it. */
export interface ChildSandbox {
  /** The temp dir (HOME of the child). */
  root: string;
  /** An empty work directory inside `root`, used as the child's cwd. */
  workDir: string;
  /** Environment overrides: HOME, KIMI_SHARE_DIR, DENO_DIR, NO_COLOR. */
  env: Record<string, string>;
  /** Remove the temp dir. */
  cleanup(): Promise<void>;
}

/** Create a sandbox temp dir with an isolated HOME and share dir. */
export async function createSandbox(): Promise<ChildSandbox> {
  const root = await Deno.makeTempDir({ prefix: "kimi-bench-" });
  const workDir = `${root}/work`;
  await Deno.mkdir(workDir);
  const env = {
    HOME: root,
    KIMI_SHARE_DIR: `${root}/share`,
    DENO_DIR: await denoCacheDir(),
    NO_COLOR: "1",
  };
  return {
    root,
    workDir,
    env,
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

/**
 * Write a config whose default model is a `kimi` provider at `baseUrl` (a mock server on
 * 127.0.0.1) with context size `maxContextSize`, as `<root>/config-<random>.json`; returns its path.
 */
export async function writeMockProviderConfig(
  root: string,
  baseUrl: string,
  maxContextSize: number,
): Promise<string> {
  const path = `${root}/config-${crypto.randomUUID().slice(0, 8)}.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      default_model: "mock",
      models: { mock: { provider: "mock", model: "mock-model", max_context_size: maxContextSize } },
      providers: { mock: { type: "kimi", base_url: baseUrl, api_key: "sk-bench" } },
    }),
  );
  return path;
}

/** The ~2 KB of prose the long-context benches fill their turns with. */
const TURN_FILLER = "The quick brown fox jumps over the lazy dog. ".repeat(44);
/** The ~20 KB tool output of each such turn. */
const TURN_OUTPUT = `${TURN_FILLER}\n`.repeat(10);

/** Bytes of message text one {@link turnRecords} turn holds (about 21 KB). */
export const TURN_TEXT_BYTES: number = TURN_OUTPUT.length + 700;

/**
 * The `context.jsonl` records of turn `i` of a long session, one JSON line each: its checkpoint,
 * the user's message, an assistant message with a Shell call, the call's ~20 KB result and the
 * answer.
 */
export function turnRecords(i: number): string[] {
  return [
    JSON.stringify({ role: "_checkpoint", id: i }),
    JSON.stringify({ role: "user", content: `turn ${i}: ${TURN_FILLER.slice(0, 200)}` }),
    JSON.stringify({
      role: "assistant",
      content: `Looking. ${TURN_FILLER.slice(0, 400)}`,
      tool_calls: [{
        type: "function",
        id: `c${i}`,
        function: { name: "Shell", arguments: '{"command":"ls"}' },
      }],
    }),
    JSON.stringify({
      role: "tool",
      content: [{ type: "text", text: TURN_OUTPUT }],
      tool_call_id: `c${i}`,
    }),
    JSON.stringify({ role: "assistant", content: `Done with ${i}.` }),
  ];
}

/**
 * Write a config for kimi's scripted provider, whose replies come from the JSON list in
 * `scriptFile` (`KIMI_SCRIPTED_ECHO_SCRIPTS`), with context size `maxContextSize` (default
 * 100,000,000), as `path` (default `<root>/config.json`); returns its path.
 */
export async function writeScriptedConfig(
  root: string,
  scriptFile: string,
  opts: { maxContextSize?: number; path?: string } = {},
): Promise<string> {
  const config = opts.path ?? `${root}/config.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      default_model: "scripted",
      models: {
        scripted: {
          provider: "echo",
          model: "scripted_echo",
          max_context_size: opts.maxContextSize ?? 100_000_000,
        },
      },
      providers: {
        echo: {
          type: "_scripted_echo",
          base_url: "",
          api_key: "",
          env: { KIMI_SCRIPTED_ECHO_SCRIPTS: scriptFile },
        },
      },
    }),
  );
  return config;
}

/** The directory of the one session below `shareDir` (a child that ran one session). */
export async function onlySessionDir(shareDir: string): Promise<string> {
  const sessions = `${shareDir}/sessions`;
  for await (const w of Deno.readDir(sessions)) {
    for await (const s of Deno.readDir(`${sessions}/${w.name}`)) {
      return `${sessions}/${w.name}/${s.name}`;
    }
  }
  throw new Error(`no session under ${sessions}`);
}
