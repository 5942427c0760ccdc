/**
 * The run lifecycle of the root command: resolve the session, build the agent, run the UI,
 * then tidy up (reference §1.1 "Run lifecycle").
 *
 * @module
 */
import { withDiscoveredModel } from "./env_model.ts";
import { ConfigError } from "../config/errors.ts";
import { loadConfig, loadConfigFromText } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { ensureShareDir } from "../config/share_dir.ts";
import { configureLog, log, withLogSession } from "../log.ts";
import { Session, SessionError } from "../session/session.ts";
import { SessionLock, SessionLockedError } from "../session/lock.ts";
import { KimiApp, type KimiAppOptions } from "../app/kimi_app.ts";
import { runSessionEnd, runSessionStart } from "../hooks/session_hooks.ts";
import type { CliOptions } from "./options.ts";
import { UsageError } from "./options.ts";
import { loadRunMcpServers, type RunResources } from "./mcp_run.ts";
import { fatalErrorText } from "./fatal_error.ts";
import type { ShellSwitch } from "../ui/shell/commands/command.ts";
import { findGitBash, processGitBashSearch } from "../process/shell_info.ts";
import { cliControlPaths } from "./cli_control_paths.ts";
import { BackgroundTaskManager } from "../background/task_manager.ts";
import { backgroundSettings } from "../background/settings.ts";
import { warnOnce } from "../sandbox/setup.ts";

/** Read an environment variable, treating a denied read as unset. */
export function safeGetEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The command that resumes a session from any directory (flags `kimi --help` lists; the work
 * dir is quoted for a POSIX shell when it needs it).
 */
export function resumeCommand(workDir: string, id: string): string {
  const dir = /^[A-Za-z0-9_\/.,:@%+=-]+$/.test(workDir)
    ? workDir
    : `'${workDir.replace(/'/g, `'\\''`)}'`;
  return `kimi --work-dir ${dir} --session ${id}`;
}

/**
 * Start loading the UI module of `ui` without waiting, so its loading overlaps the config,
 * session and agent set-up (`runUI` then gets the same module).
 */
function prefetchUi(ui: CliOptions["ui"]): void {
  let p: Promise<unknown> | null = null;
  if (ui === "print") {
    p = import("../ui/print/print_ui.ts");
  } else if (ui === "wire") {
    p = import("../ui/wire_server/run_wire.ts");
  }
  p?.catch(() => {});
}

/** Run the agent in the selected UI; resolves with the exit code. */
export async function runAgent(opts: CliOptions): Promise<number> {
  // A bad `--config` text is a usage error of that flag (exit 2), whatever the terminal is
  // (`kimi --config --help` takes `--help` as the text).
  if (opts.configText !== undefined) {
    try {
      loadConfigFromText(opts.configText);
    } catch (err) {
      if (err instanceof ConfigError) throw new UsageError(err.message, "--config");
      throw err;
    }
  }
  // refuse before anything starts (MCP servers, a session dir): nothing would use them
  // (`--acp` runs the shell UI here too, as before)
  if ((opts.ui === "shell" || opts.ui === "acp") && !Deno.stdin.isTerminal()) {
    console.error(
      "Error: standard input is not a terminal, so the interactive shell cannot start.\n" +
        'Use `kimi --print -p "..."` (or pipe the prompt into `kimi --print`) for a ' +
        "non-interactive run, or `kimi --wire` to embed kimi in another program.",
    );
    return 1;
  }
  if (opts.ui === "print" && opts.inputFormat === "text" && opts.prompt === undefined) {
    const piped = Deno.stdin.isTerminal()
      ? ""
      : (await new Response(Deno.stdin.readable).text()).trim();
    // No command: nothing runs, nothing is printed (the reference's print mode).
    if (!piped) return 0;
    opts = { ...opts, prompt: piped };
  }
  prefetchUi(opts.ui);
  const shareDir = await ensureShareDir(safeGetEnv);
  configureLog({ shareDir, debug: opts.debug });
  let config: Config;
  let notices: string[] = [];
  let configPath: string | null;
  try {
    ({ config, path: configPath, notices = [] } = await loadConfig({
      shareDir,
      configFile: opts.configFile,
      configText: opts.configText,
    }));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // A bad `--config` text is a usage error of that flag (exit 2); a bad config file is a
    // fatal error of the run: logged, and reported with where the log is (exit 1).
    if (opts.configText !== undefined) throw new UsageError(err.message, "--config");
    const traceback = opts.debug ? (err.stack ?? err.message) : null;
    log("ERROR", "cli", `Invalid configuration: ${traceback ?? err.message}`);
    console.error(fatalErrorText(err.message, shareDir, traceback));
    return 1;
  }
  for (const notice of notices) {
    log("WARNING", "config", notice);
    console.error(notice);
  }
  if (Deno.build.os === "windows") {
    // as the reference: the Shell tool needs Git Bash, and its absence is said at start
    const bash = findGitBash(processGitBashSearch());
    if ("error" in bash) {
      log("ERROR", "cli", bash.error);
      console.error(bash.error);
      return 1;
    }
  }
  // The model's provider SDK loads while MCP config and the session are set up.
  KimiApp.prefetch(
    config,
    opts.model,
    opts.agentFile ? undefined : { builtin: opts.agent ?? "default" },
  );
  const run: RunResources = {
    mcpServers: await loadRunMcpServers(opts, shareDir),
    app: null,
    tasks: new Map(),
    warnShell: warnOnce(),
  };

  let session: Session;
  let resumed = true;
  let newSessionNote: string | undefined;
  if (opts.continue) {
    try {
      session = await Session.continue({ shareDir, workDir: opts.workDir });
    } catch (err) {
      if (err instanceof SessionError) throw new UsageError(err.message, "--continue");
      throw err;
    }
  } else if (opts.session === "") {
    // `-S` / `--resume` without an id (shell only): pick one of this work dir's sessions
    const { pickSessionAtStart } = await import("../ui/shell/session_picker.ts");
    const picked = await pickSessionAtStart({ shareDir, workDir: opts.workDir });
    resumed = picked !== null;
    session = picked ?? await Session.create({ shareDir, workDir: opts.workDir });
  } else if (opts.session) {
    const found = await Session.find({ shareDir, workDir: opts.workDir, id: opts.session });
    resumed = found !== null;
    if (!found) {
      // the reference's behaviour (programs rely on it): a new session with that id; say so,
      // so a mistyped id is noticed, and point at a work dir that has it
      const elsewhere = await Session.workDirsWith({
        shareDir,
        workDir: opts.workDir,
        id: opts.session,
      });
      console.error(
        `kimi: no session ${opts.session} in ${opts.workDir}: starting a new session with that ID.` +
          elsewhere.map((d) =>
            `\nSession ${opts.session} is in ${d}: resume it with ${
              resumeCommand(d, opts.session!)
            }`
          ).join(""),
      );
      newSessionNote = `New session ${opts.session} (no session with that ID in this work dir).`;
    }
    session = found ?? await Session.create({ shareDir, workDir: opts.workDir, id: opts.session });
  } else {
    resumed = false;
    session = await Session.create({ shareDir, workDir: opts.workDir });
  }
  if (opts.ui === "print" && !resumed) session.state.print_run = true;
  // One writer per session: a second process is refused (or waits, with --wait-for-session).
  const locks = new SessionLocks(opts.waitForSession);
  try {
    await locks.take(session);
  } catch (err) {
    if (err instanceof SessionLockedError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  }
  const id = session.id;
  withLogSession(
    id,
    () => log("INFO", "cli", `session ${id} in ${session.workDir} (ui: ${opts.ui})`),
  );
  for (const dir of opts.addDirs) {
    const inside = dir === session.workDir || dir.startsWith(session.workDir + "/");
    if (!inside && !session.state.additional_dirs.includes(dir)) {
      session.state.additional_dirs.push(dir);
    }
  }

  const handoff: ShellHandoff = {};
  let code: number;
  try {
    code = await withLogSession(
      id,
      () =>
        runUI(opts, { config, path: configPath }, session, resumed, run, locks, {
          newSessionNote,
          handoff,
        }),
    );
  } finally {
    await run.app?.mcp?.close(); // stops MCP server processes
    if (!config.background.keep_alive_on_exit) {
      const managers = [...run.tasks.values()];
      run.tasks.clear();
      await Promise.all(managers.map((m) => m.stopAll("kimi exited").catch(() => [])));
    }
    if (await session.isEmpty()) {
      await session.delete();
    }
    await locks.releaseAll();
  }
  if (handoff.switchTo === "web" && handoff.session) {
    // `/web`: the session (kept only when it holds something) goes to the browser
    const kept = await Deno.stat(handoff.session.dir).then(() => true, () => false);
    const { runWebFromShell } = await import("./run_web.ts");
    return await runWebFromShell(opts, kept ? handoff.session.id : null);
  }
  if (handoff.switchTo === "vis" && handoff.session) {
    // `/vis`: the session's records in the tracing viewer (the viewer lists all when it is empty)
    const kept = await Deno.stat(handoff.session.dir).then(() => true, () => false);
    const { runVis } = await import("./vis_run.ts");
    return await runVis({
      sessionId: kept ? handoff.session.id : undefined,
      host: "127.0.0.1",
      port: 5495,
      open: true,
    });
  }
  return code;
}

/** What the shell hands over when it ends with `/web` or `/vis`. */
interface ShellHandoff {
  /** The front end to start. */
  switchTo?: ShellSwitch;
  /** The session in use when the shell ended. */
  session?: Session;
}

/** The session locks this run holds: the current session's, swapped when the shell switches. */
class SessionLocks {
  readonly #wait: boolean;
  readonly #held = new Map<string, SessionLock>();

  constructor(wait: boolean) {
    this.#wait = wait;
  }

  /** Take the lock of `session` (no-op when held). Throws SessionLockedError. */
  async take(session: Session): Promise<void> {
    if (this.#held.has(session.dir)) return;
    const lock = await SessionLock.acquire(session.dir, {
      sessionId: session.id,
      wait: this.#wait,
    });
    this.#held.set(session.dir, lock);
  }

  /** Release the lock of `session`, when held. */
  async release(session: Session): Promise<void> {
    const lock = this.#held.get(session.dir);
    this.#held.delete(session.dir);
    await lock?.release();
  }

  /** Release every lock but the one of `keep`. */
  async releaseExcept(keep: Session): Promise<void> {
    for (const [dir, lock] of this.#held) {
      if (dir === keep.dir) continue;
      this.#held.delete(dir);
      await lock.release();
    }
  }

  /** Release every lock. */
  async releaseAll(): Promise<void> {
    const all = [...this.#held.values()];
    this.#held.clear();
    for (const lock of all) await lock.release();
  }
}

async function runUI(
  opts: CliOptions,
  loaded: { config: Config; path: string | null },
  session: Session,
  resumed: boolean,
  run: RunResources,
  locks: SessionLocks,
  extra: { newSessionNote?: string; handoff?: ShellHandoff } = {},
): Promise<number> {
  const config = loaded.config;
  const getEnv = await withDiscoveredModel(config, opts.model, safeGetEnv);
  const configPath = opts.configText !== undefined
    ? null
    : (opts.configFile ?? `${session.shareDir}/config.toml`);
  // One task manager per session of this run, kept when the shell rebuilds its app.
  const tasksOf = (s: Session): BackgroundTaskManager => {
    let m = run.tasks.get(s.dir);
    if (!m) {
      m = new BackgroundTaskManager(s.dir, backgroundSettings(config.background));
      run.tasks.set(s.dir, m);
    }
    return m;
  };
  const appOptions: KimiAppOptions = {
    controlPaths: { cli: cliControlPaths(opts) },
    tasks: tasksOf(session),
    warnShell: run.warnShell,
    mcpServers: run.mcpServers,
    reportMcp: (line) => console.error(line),
    configFile: loaded.path,
    reportRules: (line) => console.error(line),
    reportPlugins: (line) => console.error(line),
    config,
    session,
    modelAlias: opts.model,
    thinking: opts.thinking,
    yolo: opts.yolo,
    afk: opts.afk,
    runtimeAfk: opts.ui === "print",
    agent: opts.agentFile ? { file: opts.agentFile } : { builtin: opts.agent ?? "default" },
    maxStepsPerTurn: opts.maxStepsPerTurn,
    maxRetriesPerStep: opts.maxRetriesPerStep,
    skillsDirs: opts.skillsDirs,
    maxRalphIterations: opts.maxRalphIterations,
    getEnv,
    plan: opts.plan,
    resumed,
  };
  const app = run.app = await KimiApp.create(appOptions);
  await runSessionStart(app.hooks, session.wireFile);
  const modelProblem = async () => {
    if (run.app?.llm) return null;
    const { explainModelNotSet } = await import("../config/model_resolution.ts");
    return explainModelNotSet(run.app?.config ?? config, {
      modelAlias: opts.model,
      getEnv,
      configPath,
    });
  };

  let code: number;
  switch (opts.ui) {
    case "print": {
      const { runPrint } = await import("../ui/print/print_ui.ts");
      code = await runPrint(app, {
        prompt: opts.prompt,
        inputFormat: opts.inputFormat,
        outputFormat: opts.outputFormat,
        finalOnly: opts.finalMessageOnly,
        modelProblem,
      });
      break;
    }
    case "wire": {
      const { runWire } = await import("../ui/wire_server/run_wire.ts");
      code = await runWire(app);
      break;
    }
    default: {
      const { runShell } = await import("../ui/shell/shell_ui.ts");
      const shell = await runShell(app, {
        createApp: async (s, c, model, thinking) => {
          const current = (run.app ?? app).session;
          // a thinking mode chosen in /model holds for the rest of the run (over --thinking)
          if (thinking !== undefined) appOptions.thinking = thinking;
          await locks.take(s); // refused while another process holds the session
          let next: KimiApp;
          try {
            await run.app?.mcp?.close();
            next = await KimiApp.create({
              ...appOptions,
              session: s,
              tasks: tasksOf(s),
              config: c,
              modelAlias: model ?? appOptions.modelAlias,
              resumed: true,
            });
          } catch (err) {
            // The shell stays on the current session: keep its lock, drop the new one.
            if (s.dir !== current.dir) await locks.release(s);
            throw err;
          }
          await locks.releaseExcept(s);
          return run.app = next;
        },
        prompt: opts.prompt,
        modelProblem,
        notice: extra.newSessionNote,
        resumed,
        configPath,
        reloadSources: async () => {
          // /reload: the config file (or --config text) and the MCP server files, read again
          const loaded = await loadConfig({
            shareDir: session.shareDir,
            configFile: opts.configFile,
            configText: opts.configText,
          });
          run.mcpServers = appOptions.mcpServers = await loadRunMcpServers(opts, session.shareDir);
          return loaded.config;
        },
      });
      code = shell.code;
      session = shell.session;
      if (extra.handoff && shell.switchTo) {
        extra.handoff.switchTo = shell.switchTo;
        extra.handoff.session = shell.session;
      }
    }
  }
  await runSessionEnd((run.app ?? app).hooks);

  if (!(await session.isEmpty())) {
    if (opts.ui !== "wire") {
      console.error(`\nTo resume this session: ${resumeCommand(session.workDir, session.id)}`);
    }
    if (code === 0) await session.setLastSession();
  }
  return code;
}
