/**
 * Where launch → first model request goes: a V8 CPU profile (through the inspector) of one
 * `kimi --print` run against the mock OpenAI server, from the first instruction to the moment
 * the first request arrives, summed by self time per module (local file, npm package, or Deno's
 * runtime/Node polyfills) and per function. Garbage collection and idle time show as `(garbage
 * collector)` and `(idle)` (idle: waiting on I/O, e.g. file reads or module fetches).
 *
 * Sampling slows the run down, so the absolute figures are higher than in `tool_loop.ts`; use
 * the shares to pick what to fix.
 *
 * Usage: `deno run -A scripts/bench/profile_startup.ts [--bundle=DIR] [--top=N]`
 *
 * @module
 */
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { startMockOpenAI } from "../../tests/helpers/mock_openai.ts";
import { createSandbox, MAIN_TS, REPO_ROOT } from "./child_env.ts";
import { markdownTable } from "./stats.ts";
import { readInspectorUrl } from "./module_probe.ts";
import { resolve } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time by key, in ms. */
export type Totals = Map<string, number>;

const NPM_PATH = /\/npm\/[^/]+\/((?:@[^/]+\/)?[^/]+)\/[^/]+\//;

/** The module a script URL belongs to, for the summary. */
export function moduleKey(url: string, repoRoot: string): string {
  if (!url) return "(native / runtime)";
  if (url.startsWith("ext:") || url.startsWith("node:")) return "(Deno runtime / Node polyfills)";
  const path = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url;
  const npm = NPM_PATH.exec(path);
  if (npm) return `npm:${npm[1]}`;
  return path.startsWith(`${repoRoot}/`) ? path.slice(repoRoot.length + 1) : path;
}

/** Sum a profile's self time per module and per function. */
export function summarizeProfile(
  profile: CpuProfile,
  repoRoot: string,
): { byModule: Totals; byFunction: Totals; totalMs: number } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byModule: Totals = new Map();
  const byFunction: Totals = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    total += ms;
    const n = nodes.get(id);
    if (!n) return;
    const { functionName, url, lineNumber } = n.callFrame;
    const special = functionName.startsWith("(") && !url;
    const mod = special ? functionName : moduleKey(url, repoRoot);
    byModule.set(mod, (byModule.get(mod) ?? 0) + ms);
    const fn = special ? functionName : `${functionName || "(anonymous)"} ${mod}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  });
  return { byModule, byFunction, totalMs: total };
}

/** Profile one run; `entry` is what `deno run --no-prompt` starts (flags and script). */
export async function profileStartup(entry: string[]): Promise<CpuProfile> {
  const sb = await createSandbox();
  const firstRequest = Promise.withResolvers<void>();
  const mock = await startMockOpenAI({
    auto: () => {
      firstRequest.resolve();
      return { text: "done" };
    },
  });
  try {
    const cfg = `${sb.root}/config.json`;
    await Deno.writeTextFile(
      cfg,
      JSON.stringify({
        default_model: "mock",
        models: { mock: { provider: "mock", model: "m", max_context_size: 100000 } },
        providers: { mock: { type: "openai_legacy", base_url: mock.url, api_key: "sk-test" } },
      }),
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--inspect-wait=127.0.0.1:0",
        "--no-prompt",
        ...entry,
        "--print",
        "--config-file",
        cfg,
        "-p",
        "hi",
      ],
      cwd: sb.workDir,
      env: sb.env,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    const { url: wsUrl, text } = await readInspectorUrl(reader);
    if (!wsUrl) throw new Error(`The inspector did not start: ${text}`);
    const drain = (async () => {
      while (!(await reader.read()).done) { /* drain */ }
    })();
    const socket = new WebSocket(wsUrl);
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error(`Could not attach to ${wsUrl}`));
    });
    const pending = new Map<number, (result: any) => void>();
    socket.onmessage = (ev) => {
      const msg = JSON.parse(String(ev.data));
      if (msg.id && pending.has(msg.id)) {
        pending.get(msg.id)!(msg.result);
        pending.delete(msg.id);
      } else if (msg.method === "Runtime.executionContextDestroyed") socket.close();
    };
    let nextId = 0;
    const call = (method: string, params?: unknown) =>
      new Promise<any>((resolve) => {
        const id = ++nextId;
        pending.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      });
    await call("Profiler.enable");
    await call("Profiler.setSamplingInterval", { interval: 100 });
    await call("Profiler.start");
    await call("Runtime.runIfWaitingForDebugger");
    await firstRequest.promise;
    const { profile } = await call("Profiler.stop");
    socket.close();
    await child.status;
    await drain;
    return profile as CpuProfile;
  } finally {
    await mock.close();
    await sb.cleanup();
  }
}

function table(totals: Totals, total: number, top: number, label: string): string {
  const rows = [...totals].sort((a, b) => b[1] - a[1]).slice(0, top);
  return markdownTable(
    [label, "Self ms", "Share"],
    rows.map(([k, ms]) => [k, ms.toFixed(1), `${((ms / total) * 100).toFixed(1)}%`]),
  );
}

if (import.meta.main) {
  const bundleArg = Deno.args.find((a) => a.startsWith("--bundle="))?.slice(9);
  // The child runs in a temp work dir, so a relative bundle path is made absolute here.
  const bundleDir = bundleArg === undefined ? undefined : resolve(bundleArg);
  const top = Number(Deno.args.find((a) => a.startsWith("--top="))?.slice(6) ?? 25);
  const entry = bundleDir
    ? [DENO_V8_FLAGS_ARG, "-A", "--no-config", `${bundleDir}/main.js`]
    : [DENO_V8_FLAGS_ARG, "-A", MAIN_TS];
  const profile = await profileStartup(entry);
  const { byModule, byFunction, totalMs } = summarizeProfile(profile, REPO_ROOT);
  console.log(`Launch → first request under the profiler: ${totalMs.toFixed(1)} ms sampled.\n`);
  console.log(table(byModule, totalMs, top, "Module"));
  console.log();
  console.log(table(byFunction, totalMs, top, "Function"));
}
