/**
 * Shared pieces of the attack tests (tests/attack_*_test.ts): the permission profiles and
 * hand-narrowed flags for a sandbox, a print-mode run of a scripted attack with its tool
 * results, the session files to search for leaks, and bubblewrap availability.
 *
 * @module
 */
import { profileFlags } from "../../scripts/launch.ts";
import { findBwrap, probeBwrap } from "../../lib/sandbox/bwrap.ts";
import { findRipgrep } from "../../lib/search/ripgrep.ts";
import { assert } from "./assert.ts";
import { denoDir, type KimiSandbox, MAIN_TS } from "./kimi_process.ts";
import { WireProcess } from "./wire_process.ts";

/** The directory holding the program's modules. */
export const PROGRAM_DIR = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** Why bubblewrap cannot be used here (`null` when it can). */
export const BWRAP_PROBLEM: string | null = await (async () => {
  const path = findBwrap();
  return path === null ? "bwrap not found on PATH" : await probeBwrap(path);
})();

/** Print a visible skip notice for tests that need bubblewrap (once per module). */
export function warnSkippedBwrap(module: string, names: readonly string[]): void {
  if (BWRAP_PROBLEM === null || names.length === 0) return;
  console.warn(
    `\n!!! ${module}: SKIPPING ${names.length} bubblewrap tests (${BWRAP_PROBLEM}):\n` +
      names.map((n) => `!!!   - ${n}`).join("\n") + "\n",
  );
}

/** The permission setups the attack tests run under. */
export type Setup = "review" | "workspace" | "narrow" | "full";

/** Deno flags of a setup for this sandbox (profiles computed by scripts/launch.ts). */
export async function flagsFor(sb: KimiSandbox, setup: Setup): Promise<string[]> {
  const ctx = {
    shareDir: sb.shareDir,
    workDir: sb.workDir,
    addDirs: [],
    modelHost: null,
    rgPath: await findRipgrep(),
    plansDir: `${sb.home}/.kimi/plans`,
  };
  switch (setup) {
    case "review":
      return profileFlags("review", ctx);
    case "workspace":
      return profileFlags("workspace", ctx);
    case "full":
      return ["-A"];
    case "narrow":
      return [
        `--allow-read=${PROGRAM_DIR},${sb.workDir},${sb.shareDir},${sb.root}/configs`,
        "--allow-env",
        `--allow-write=${sb.workDir},${sb.shareDir}`,
        "--allow-run=bash,bwrap",
      ];
  }
}

/** A config file for scripted runs, in `<root>/configs` (readable by every setup). */
export async function scriptedConfigFile(
  sb: KimiSandbox,
  scripts: string[],
  extra: Record<string, unknown> = {},
  apiKey = "",
  dir = `${sb.root}/configs`,
): Promise<string> {
  await Deno.mkdir(`${sb.root}/configs`, { recursive: true });
  const scriptsPath = `${sb.root}/configs/scripts-${crypto.randomUUID().slice(0, 8)}.json`;
  await Deno.writeTextFile(scriptsPath, JSON.stringify(scripts));
  const config = {
    default_model: "scripted",
    models: { scripted: { provider: "echo", model: "scripted_echo", max_context_size: 100000 } },
    providers: {
      echo: {
        type: "_scripted_echo",
        base_url: "",
        api_key: apiKey,
        env: { KIMI_SCRIPTED_ECHO_SCRIPTS: scriptsPath },
      },
    },
    ...extra,
  };
  const path = `${dir}/config-${crypto.randomUUID().slice(0, 8)}.json`;
  await Deno.writeTextFile(path, JSON.stringify(config));
  return path;
}

/** The outcome of a print-mode attack run. */
export interface AttackRun {
  /** Exit code. */
  code: number;
  /** Raw stdout (stream-json). */
  stdout: string;
  /** Raw stderr. */
  stderr: string;
  /** Tool result text by tool call id. */
  results: Map<string, string>;
  /** The tool result of one call (a placeholder naming the id when missing). */
  result(id: string): string;
}

/** Run a scripted attack in print mode (`--yolo`, stream-json) under `permissions`. */
export async function runAttack(
  sb: KimiSandbox,
  script: string[],
  permissions: string[],
  opts: {
    args?: string[];
    env?: Record<string, string>;
    config?: Record<string, unknown>;
    apiKey?: string;
    /** Where the config file goes (default `<root>/configs`). */
    configDir?: string;
  } = {},
): Promise<AttackRun> {
  const config = await scriptedConfigFile(
    sb,
    script,
    opts.config,
    opts.apiKey,
    opts.configDir,
  );
  const r = await sb.run(
    [
      "--print",
      "--yolo",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      ...(opts.args ?? []),
      "-p",
      "go",
    ],
    { permissions, env: opts.env },
  );
  const results = toolResults(r.stdout);
  return { ...r, results, result: (id) => results.get(id) ?? `<no result for ${id}>` };
}

/** Tool result text (text parts joined by newlines) by tool call id, from stream-json output. */
export function toolResults(stdout: string): Map<string, string> {
  const results = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.role !== "tool") continue;
    const text = typeof msg.content === "string"
      ? msg.content
      : msg.content.map((p: { text?: string }) => p.text ?? "").join("\n");
    results.set(msg.tool_call_id, text);
  }
  return results;
}

/** Every session file of the sandbox that records a turn (context.jsonl, wire.jsonl), joined. */
export async function sessionFiles(sb: KimiSandbox): Promise<string> {
  let text = "";
  for (const dir of await sb.sessionDirs()) {
    for (const name of ["context.jsonl", "wire.jsonl"]) {
      text += await Deno.readTextFile(`${dir}/${name}`).catch(() => "");
    }
  }
  return text;
}

/** Assert a secret appears nowhere: tool results, stdout, context.jsonl, wire.jsonl. */
export async function assertNoLeak(
  sb: KimiSandbox,
  run: { stdout: string; stderr?: string },
  secret: string,
): Promise<void> {
  assert(!run.stdout.includes(secret), `stdout leaks ${secret}:\n${run.stdout}`);
  if (run.stderr !== undefined) assert(!run.stderr.includes(secret), `stderr leaks ${secret}`);
  const files = await sessionFiles(sb);
  assert(files.length > 0, "no session files were written");
  assert(!files.includes(secret), `the session files leak ${secret}`);
}

/** Whether a path exists (without following a final symlink). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Spawn `main.ts --wire` in a sandbox under explicit permissions. */
export function spawnWireWith(
  sb: KimiSandbox,
  permissions: string[],
  args: string[],
): WireProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...permissions, MAIN_TS, "--wire", ...args],
    cwd: sb.workDir,
    clearEnv: true,
    env: {
      HOME: sb.home,
      KIMI_SHARE_DIR: sb.shareDir,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return new WireProcess(child);
}
