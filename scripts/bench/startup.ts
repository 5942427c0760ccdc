/**
 * Startup benchmark: wall time of `kimi --version` and `kimi --help` (each spawned as
 * `deno run --no-prompt -A main.ts …`), against `deno run` of an empty script measured in the
 * same run, plus a check of which modules each command loads (see module_probe.ts), and of an
 * agent run (`--print` against the mock OpenAI server, from the source and from the bundle): it
 * must not compile the `openai` SDK's client class, which only the Files API (Kimi video
 * uploads) loads.
 *
 * Runs are interleaved round-robin (baseline, baseline + config, --version, --help) after
 * warm-up runs, so drift in machine load affects every command alike.
 *
 * With `--bundle=DIR` (a `deno task bundle` output), the bundle's `--version` and `--help` are
 * timed in the same rounds.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/startup.ts [--runs=N] [--warmup=N] [--bundle=DIR]`
 *
 * @module
 */
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { startMockOpenAI } from "../../tests/helpers/mock_openai.ts";
import { type ChildSandbox, createSandbox, MAIN_TS, REPO_ROOT } from "./child_env.ts";
import { type ModuleProbe, probeModules } from "./module_probe.ts";
import { timeToExit } from "./spawn_timing.ts";
import {
  formatMs,
  formatRatio,
  formatSummary,
  markdownTable,
  summarize,
  type Summary,
} from "./stats.ts";

/** Options of {@link runStartupBench}. */
export interface StartupOptions {
  /** Measured runs per command. Default 15. */
  runs?: number;
  /** Discarded warm-up runs per command. Default 3. */
  warmup?: number;
  /** A `deno task bundle` output directory: also time `--version`/`--help` of its `main.js`. */
  bundleDir?: string;
}

/** The module check of one command. */
export interface ModuleCheck {
  /** The command's arguments, e.g. `["--version"]`. */
  args: string[];
  /** `source` (`main.ts`) or `bundle` (the bundle's `main.js`). */
  build: "source" | "bundle";
  /** What the probe saw. */
  probe: ModuleProbe;
  /** Loaded modules or packages that this command must not load (empty when the check passes). */
  unexpected: string[];
}

/** What an agent run compiled of the `openai` SDK. */
export interface AgentRunCheck {
  /** `source` or `bundle`. */
  build: "source" | "bundle";
  /** Exit code of the run. */
  code: number;
  /** Files of the `openai` package it compiled (source), or bundle chunks holding any of it. */
  openaiFiles: string[];
  /** Of those, the ones holding the SDK's client class (must be none). */
  unexpected: string[];
  /**
   * Control: where the client class is (the package's `client.mjs`, or the bundle chunk with
   * its marker), so an empty `unexpected` means something; null when it was not found.
   */
  clientAt: string | null;
}

/** Result of {@link runStartupBench}. */
export interface StartupResult {
  /** `deno run` of an empty script outside any project (the runtime floor). */
  baseline: Summary;
  /** `deno run --config <repo>/deno.json` of an empty script (adds config + lockfile load). */
  baselineWithConfig: Summary;
  /** `kimi --version`. */
  version: Summary;
  /** `kimi --help`. */
  help: Summary;
  /**
   * Each command's time over the baseline's in the same round, by command key (`version`,
   * `help`, `bundleVersion`, `bundleHelp`, …): pairs share the load of their moment.
   */
  pairedRatios: Record<string, Summary>;
  /** `kimi --version` from the bundle (when a bundle was given). */
  bundleVersion?: Summary;
  /** `kimi --help` from the bundle (when a bundle was given). */
  bundleHelp?: Summary;
  /** Module checks of `--version` and `--help`. */
  modules: ModuleCheck[];
  /** Whether the probe detected the `openai` package in a control script that imports it. */
  probeControlPassed: boolean;
  /** The agent-run checks (source, and bundle when a bundle was given). */
  agentRuns: AgentRunCheck[];
}

/** Local module directories that are LLM, MCP or UI code. */
const HEAVY_LOCAL = /^(lib\/llm|lib\/mcp|lib\/ui|lib\/app|lib\/soul|lib\/wire|tools)\//;
/** npm packages `--version` and `--help` may load. */
const ALLOWED_NPM: Record<string, string[]> = {
  "--version": [],
  "--help": ["commander", "@commander-js/extra-typings", "strip-ansi", "ansi-regex"],
};

function packageName(nameAtVersion: string): string {
  return nameAtVersion.slice(0, nameAtVersion.lastIndexOf("@"));
}

/** Files of the `openai` package (its path in Deno's npm cache). */
const OPENAI_FILE = /\/npm\/[^/]+\/openai\/[^/]+\/(.+)$/;
/** The SDK's client class and what only it loads (every API resource). */
const OPENAI_CLIENT_FILE = /\/openai\/[^/]+\/(client|index)\.mjs$|\/openai\/[^/]+\/resources\//;

/**
 * Probe one `kimi --print` run against the mock OpenAI server (provider `openai_legacy`, one
 * text reply) and report which parts of the `openai` SDK it compiled.
 */
async function checkAgentRun(
  sb: ChildSandbox,
  build: "source" | "bundle",
  bundleDir?: string,
): Promise<AgentRunCheck> {
  const mock = await startMockOpenAI();
  try {
    const cfg = `${sb.root}/agent-run-config.json`;
    await Deno.writeTextFile(
      cfg,
      JSON.stringify({
        default_model: "mock",
        models: { mock: { provider: "mock", model: "mock-model", max_context_size: 100000 } },
        providers: { mock: { type: "openai_legacy", base_url: mock.url, api_key: "sk-test" } },
      }),
    );
    const kimiArgs = ["--print", "--config-file", cfg, "-p", "Say done."];
    const probe = await probeModules({
      scriptArgs: [build === "source" ? MAIN_TS : `${bundleDir}/main.js`, ...kimiArgs],
      denoFlags: [
        "--no-prompt",
        DENO_V8_FLAGS_ARG,
        "-A",
        ...(build === "bundle" ? ["--no-config"] : []),
      ],
      cwd: sb.workDir,
      env: sb.env,
      repoRoot: REPO_ROOT,
      timeoutMs: 60000,
    });
    const code = mock.requests.some((r) => r.method === "POST") ? probe.code : -1;
    if (build === "source") {
      const files = probe.allUrls.map((u) => decodeURIComponent(u).match(OPENAI_FILE))
        .filter((m) => m !== null).map((m) => m[1]).sort();
      return {
        build,
        code,
        openaiFiles: files,
        unexpected: files.filter((f) => OPENAI_CLIENT_FILE.test(`/openai/v/${f}`)),
        clientAt: "openai/client.mjs",
      };
    }
    // the bundle: a chunk is known by the source files it holds (the bundler's `// npm:…` lines)
    const sources = (text: string) =>
      [...text.matchAll(/^\/\/ npm:openai\/[^/\s]+\/(\S+)$/gm)].map((m) => m[1]);
    const holdsClient = (files: string[]) =>
      files.some((f) => OPENAI_CLIENT_FILE.test(`/openai/v/${f}`));
    const compiled = probe.allUrls.filter((u) => u.startsWith(`file://${bundleDir}/`))
      .map((u) => decodeURIComponent(new URL(u).pathname));
    const openaiFiles: string[] = [];
    const unexpected: string[] = [];
    for (const file of compiled) {
      const files = sources(await Deno.readTextFile(file));
      if (files.length === 0) continue;
      const name = file.slice(bundleDir!.length + 1);
      openaiFiles.push(`${name} (${files.length} files)`);
      if (holdsClient(files)) unexpected.push(name);
    }
    let clientAt: string | null = null;
    for await (const entry of Deno.readDir(bundleDir!)) {
      if (!entry.isFile || !entry.name.endsWith(".js")) continue;
      if (holdsClient(sources(await Deno.readTextFile(`${bundleDir}/${entry.name}`)))) {
        clientAt = entry.name;
      }
    }
    return { build, code, openaiFiles: openaiFiles.sort(), unexpected, clientAt };
  } finally {
    await mock.close();
  }
}

/** Run the startup benchmark. */
export async function runStartupBench(opts: StartupOptions = {}): Promise<StartupResult> {
  const runs = opts.runs ?? 15;
  const warmup = opts.warmup ?? 3;
  const sb = await createSandbox();
  try {
    const empty = `${sb.root}/empty.ts`;
    await Deno.writeTextFile(empty, "");
    const commands: Record<string, string[]> = {
      baseline: ["run", "--no-prompt", "-A", "--no-config", empty],
      baselineWithConfig: ["run", "--no-prompt", "-A", "--config", `${REPO_ROOT}/deno.json`, empty],
      version: ["run", "--no-prompt", DENO_V8_FLAGS_ARG, "-A", MAIN_TS, "--version"],
      help: ["run", "--no-prompt", DENO_V8_FLAGS_ARG, "-A", MAIN_TS, "--help"],
    };
    if (opts.bundleDir) {
      const main = `${opts.bundleDir}/main.js`;
      commands.bundleVersion = [
        "run",
        "--no-prompt",
        DENO_V8_FLAGS_ARG,
        "-A",
        "--no-config",
        main,
        "--version",
      ];
      commands.bundleHelp = [
        "run",
        "--no-prompt",
        DENO_V8_FLAGS_ARG,
        "-A",
        "--no-config",
        main,
        "--help",
      ];
    }
    const samples: Record<string, number[]> = {};
    for (const key of Object.keys(commands)) samples[key] = [];
    for (let i = 0; i < warmup + runs; i++) {
      for (const [key, args] of Object.entries(commands)) {
        const t = await timeToExit({ args, cwd: sb.workDir, env: sb.env });
        if (t.code !== 0) {
          throw new Error(`\`deno ${args.join(" ")}\` failed (exit ${t.code}): ${t.stderr.trim()}`);
        }
        if (i >= warmup) samples[key].push(t.ms);
      }
    }

    const modules: ModuleCheck[] = [];
    for (const flag of ["--version", "--help"]) {
      const probe = await probeModules({
        scriptArgs: [MAIN_TS, flag],
        denoFlags: ["--no-prompt", "-A"],
        cwd: sb.workDir,
        env: sb.env,
        repoRoot: REPO_ROOT,
      });
      const unexpected = [
        ...probe.localModules.filter((m) => HEAVY_LOCAL.test(m)),
        ...probe.npmPackages.filter((p) => !ALLOWED_NPM[flag].includes(packageName(p))),
      ];
      if (probe.code !== 0) unexpected.push(`(exit code ${probe.code})`);
      modules.push({ args: [flag], build: "source", probe, unexpected });
    }
    if (opts.bundleDir) {
      // The bundle's `--help` starts no Node built-in (Node's compatibility layer costs it
      // about a third of an empty script).
      const probe = await probeModules({
        scriptArgs: [`${opts.bundleDir}/main.js`, "--help"],
        denoFlags: ["--no-prompt", "-A"],
        cwd: sb.workDir,
        env: sb.env,
        repoRoot: REPO_ROOT,
      });
      const unexpected = [...probe.nodeModules];
      if (probe.code !== 0) unexpected.push(`(exit code ${probe.code})`);
      modules.push({ args: ["--help"], build: "bundle", probe, unexpected });
    }

    // Control: the probe must see a package that is really imported.
    const control = `${sb.root}/control.ts`;
    await Deno.writeTextFile(control, 'await import("openai");\n');
    const controlProbe = await probeModules({
      scriptArgs: [control],
      denoFlags: ["--no-prompt", "-A", "--config", `${REPO_ROOT}/deno.json`],
      cwd: sb.workDir,
      env: sb.env,
      repoRoot: REPO_ROOT,
    });
    const probeControlPassed = controlProbe.npmPackages.some((p) => packageName(p) === "openai") &&
      controlProbe.allUrls.some((u) => OPENAI_CLIENT_FILE.test(u));

    const agentRuns = [await checkAgentRun(sb, "source")];
    if (opts.bundleDir) agentRuns.push(await checkAgentRun(sb, "bundle", opts.bundleDir));

    return {
      baseline: summarize(samples.baseline),
      baselineWithConfig: summarize(samples.baselineWithConfig),
      version: summarize(samples.version),
      help: summarize(samples.help),
      ...(opts.bundleDir
        ? {
          bundleVersion: summarize(samples.bundleVersion),
          bundleHelp: summarize(samples.bundleHelp),
        }
        : {}),
      pairedRatios: Object.fromEntries(
        Object.keys(samples).filter((k) => k !== "baseline").map((k) => [
          k,
          summarize(samples[k].map((ms, i) => ms / samples.baseline[i])),
        ]),
      ),
      modules,
      probeControlPassed,
      agentRuns,
    };
  } finally {
    await sb.cleanup();
  }
}

/** The result as Markdown: a timing table and the module check. */
export function startupMarkdown(r: StartupResult): string {
  const row = (name: string, s: Summary, key?: string) => [
    name,
    formatSummary(s),
    key && r.pairedRatios[key]
      ? `${r.pairedRatios[key].median.toFixed(2)}×`
      : formatRatio(s.median, r.baseline.median),
    `+${formatMs(s.median - r.baseline.median)}`,
  ];
  const table = markdownTable(
    ["Command", "Median (min–max)", "vs baseline", "Over baseline"],
    [
      row("`deno run` empty script (baseline)", r.baseline),
      row("`deno run --config deno.json` empty script", r.baselineWithConfig, "baselineWithConfig"),
      row("`kimi --version`", r.version, "version"),
      row("`kimi --help`", r.help, "help"),
      ...(r.bundleVersion
        ? [row("`kimi --version` (bundle)", r.bundleVersion, "bundleVersion")]
        : []),
      ...(r.bundleHelp ? [row("`kimi --help` (bundle)", r.bundleHelp, "bundleHelp")] : []),
    ],
  );
  const checks = r.modules.map((m) => {
    const status = m.unexpected.length ? `FAIL, unexpected: ${m.unexpected.join(", ")}` : "OK";
    if (m.build === "bundle") {
      const node = m.probe.nodeModules.length ? m.probe.nodeModules.join(", ") : "none";
      return `- \`kimi ${m.args.join(" ")}\` (bundle): ${status}. ` +
        `${m.probe.localModules.length} chunks; Node built-ins: ${node}.`;
    }
    const npm = m.probe.npmPackages.length ? m.probe.npmPackages.join(", ") : "none";
    return `- \`kimi ${m.args.join(" ")}\`: ${status}. ${m.probe.localModules.length} local ` +
      `modules (${m.probe.localModules.join(", ")}); npm packages: ${npm}.`;
  });
  const control = r.probeControlPassed
    ? "- Probe control (a script importing `openai`): detected, so the check can fail."
    : "- Probe control FAILED: a script importing `openai` was not detected; the check above " +
      "proves nothing.";
  const agentRuns = r.agentRuns.map((a) => {
    const what = `- Agent run (\`kimi --print\`, OpenAI-compatible provider, ${a.build})`;
    if (a.code !== 0) return `${what}: FAIL, the run did not complete (exit ${a.code}).`;
    if (a.clientAt === null) {
      return `${what}: FAIL, the SDK's client class was not found, so the check proves nothing.`;
    }
    const status = a.unexpected.length
      ? `FAIL, it compiled the SDK's client class: ${a.unexpected.join(", ")}`
      : `OK, no SDK client class (it lives in ${a.clientAt}, loaded for video uploads only)`;
    return `${what}: ${status}; \`openai\` ${a.build === "source" ? "files" : "chunks"} ` +
      `compiled: ${a.openaiFiles.length ? a.openaiFiles.join(", ") : "none"}.`;
  });
  return `${table}\n\n(${r.version.n} runs each after warm-up, interleaved; "vs baseline" is the median of each round's ratio to the baseline run of the same round.)\n\n` +
    `Modules compiled by V8 (inspector \`Debugger.scriptParsed\`), no LLM, MCP, UI, app, soul, wire or tool module allowed:\n\n` +
    `${[...checks, control].join("\n")}\n\n` +
    `An agent run loads what its provider needs, not the \`openai\` SDK's client class ` +
    `(every API resource, ~1 MB):\n\n${agentRuns.join("\n")}`;
}

function intFlag(name: string): number | undefined {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split("=")[1]) : undefined;
}

if (import.meta.main) {
  const bundleDir = Deno.args.find((a) => a.startsWith("--bundle="))?.slice("--bundle=".length);
  const r = await runStartupBench({ runs: intFlag("runs"), warmup: intFlag("warmup"), bundleDir });
  console.log(startupMarkdown(r));
}
