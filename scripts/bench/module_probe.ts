/**
 * Which modules a `deno run` actually loads, observed through the V8 inspector.
 *
 * Why this method: `deno info --json main.ts` lists the static graph (and Deno's graph builder
 * also pre-resolves string-literal dynamic imports), so neither says what was *executed*. V8,
 * however, reports every script it compiles as a `Debugger.scriptParsed` event, and a module
 * must be compiled before it can be instantiated or evaluated. So the child is started with
 * `--inspect-wait`, we attach over the DevTools WebSocket, enable the Debugger domain, let it
 * run, and collect the URL of every compiled script: local modules (`file://…/lib/…`) and npm
 * packages (files under `<DENO_DIR>/npm/<registry>/<package>/<version>/`). A module absent
 * from that list was provably neither evaluated nor even compiled.
 *
 * @module
 */

/** The modules one probed run compiled. */
export interface ModuleProbe {
  /** Exit code of the child. */
  code: number;
  /** Its stdout. */
  stdout: string;
  /** Local (non-npm) `file://` modules, as paths relative to `repoRoot` when inside it. */
  localModules: string[];
  /** npm packages with at least one compiled file, as `name@version`, sorted. */
  npmPackages: string[];
  /** Every compiled script URL (internal `ext:`/`node:` ones excluded). */
  allUrls: string[];
  /** The Node built-in modules compiled (`node:fs`, …), sorted. */
  nodeModules: string[];
}

/** Options of {@link probeModules}. */
export interface ProbeOptions {
  /** Arguments after `deno run` flags: the script and its arguments. */
  scriptArgs: string[];
  /** Extra `deno run` flags, e.g. `--no-prompt -A`. */
  denoFlags: string[];
  /** Working directory of the child. */
  cwd: string;
  /** Environment overrides. */
  env: Record<string, string>;
  /** Repository root, to shorten local paths. */
  repoRoot: string;
  /** Give up after this many ms. Default 30000. */
  timeoutMs?: number;
}

const NPM_PATH = /\/npm\/[^/]+\/((?:@[^/]+\/)?[^/]+)\/([^/]+)\//;

/** The DevTools session with the probed process failed before its program ran. */
export class InspectorSessionError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "InspectorSessionError";
  }
}

/**
 * Run a script under `--inspect-wait` and report which modules V8 compiled. A DevTools session
 * that fails before the program ran (the inspector's socket, not the program) is tried again
 * (up to four times) with a fresh process: what the program loads is then still observed whole.
 */
export async function probeModules(opts: ProbeOptions): Promise<ModuleProbe> {
  for (let attempt = 1;; attempt++) {
    try {
      return await probeOnce(opts);
    } catch (e) {
      // (A loaded machine has been seen to drop the session twice in a row.)
      if (!(e instanceof InspectorSessionError) || attempt >= 4) throw e;
    }
  }
}

/**
 * Read a child's stderr until V8's inspector announces its WebSocket URL (the whole line: a
 * chunk can end in the middle of the URL). `url` is undefined when stderr ended first; `text` is
 * what was read.
 */
export async function readInspectorUrl(
  reader: ReadableStreamDefaultReader<string>,
): Promise<{ url: string | undefined; text: string }> {
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { url: undefined, text };
    text += value;
    const url = /Debugger listening on (ws:\/\/\S+)\r?\n/.exec(text)?.[1];
    if (url) return { url, text };
  }
}

async function probeOnce(opts: ProbeOptions): Promise<ModuleProbe> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--inspect-wait=127.0.0.1:0", ...opts.denoFlags, ...opts.scriptArgs],
    cwd: opts.cwd,
    env: opts.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdoutPromise = new Response(child.stdout).text();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, opts.timeoutMs ?? 30000);

  // Read stderr until the inspector announces its WebSocket URL; keep draining afterwards.
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const { url: wsUrl, text: stderrText } = await readInspectorUrl(reader);
  const drain = (async () => {
    for (;;) {
      const { done } = await reader.read();
      if (done) return;
    }
  })();
  if (!wsUrl) {
    clearTimeout(timer);
    await child.status;
    throw new Error(`The inspector did not start: ${stderrText.trim()}`);
  }

  const urls = new Set<string>();
  const socket = new WebSocket(wsUrl);
  const debuggerEnabled = Promise.withResolvers<void>();
  const closed = new Promise<void>((resolve) => {
    const gone = () => {
      // A session that ends before the debugger answered would leave the probe waiting forever.
      debuggerEnabled.reject(
        new InspectorSessionError(`The inspector session at ${wsUrl} ended before it was set up`),
      );
      resolve();
    };
    socket.addEventListener("close", gone);
    socket.addEventListener("error", gone);
  });
  debuggerEnabled.promise.catch(() => {});
  let enableId = -1;
  socket.onmessage = (ev) => {
    const msg = JSON.parse(String(ev.data));
    if (msg.method === "Debugger.scriptParsed" && msg.params?.url) urls.add(msg.params.url);
    else if (msg.id === enableId) debuggerEnabled.resolve();
    // Deno keeps the process alive until the debugger disconnects once the program is done.
    else if (msg.method === "Runtime.executionContextDestroyed") socket.close();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () =>
        reject(new InspectorSessionError(`Could not attach to the inspector at ${wsUrl}`));
    });
  } catch (e) {
    clearTimeout(timer);
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await drain;
    await stdoutPromise;
    throw e;
  }
  let id = 0;
  const send = (method: string) => socket.send(JSON.stringify({ id: ++id, method }));
  send("Runtime.enable");
  send("Debugger.enable");
  enableId = id;
  try {
    await debuggerEnabled.promise;
  } catch (e) {
    clearTimeout(timer);
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await drain;
    await stdoutPromise;
    throw e;
  }
  send("Runtime.runIfWaitingForDebugger");

  const status = await child.status;
  clearTimeout(timer);
  await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
  if (socket.readyState === WebSocket.OPEN) socket.close();
  await drain;
  const stdout = await stdoutPromise;

  const allUrls = [...urls].filter((u) => u.startsWith("file://") || u.startsWith("npm:"));
  const npm = new Set<string>();
  const local: string[] = [];
  for (const u of allUrls) {
    const path = u.startsWith("file://") ? decodeURIComponent(new URL(u).pathname) : u;
    const m = path.match(NPM_PATH);
    if (m) npm.add(`${m[1]}@${m[2]}`);
    else {
      local.push(
        path.startsWith(opts.repoRoot + "/") ? path.slice(opts.repoRoot.length + 1) : path,
      );
    }
  }
  return {
    code: status.code,
    stdout,
    localModules: local.sort(),
    npmPackages: [...npm].sort(),
    allUrls,
    nodeModules: [...urls].filter((u) => u.startsWith("node:")).sort(),
  };
}
