/**
 * The run state of one session, carried on the tool environment: how its commands are spawned
 * (the sandbox plan as a command wrapper), its control paths, the live output of its running
 * tool calls and its background tasks. One process may host many sessions (`kimi acp`); each
 * has its own, so no session sees another's confinement, control paths, output or tasks.
 *
 * @module
 */
import type { BackgroundTaskManager } from "../background/task_manager.ts";
import type { CommandWrapper } from "../process/command_wrapper.ts";
import type { ControlPathSet } from "./control_paths.ts";
import type { ToolOutputFeed } from "./live_output.ts";

/** One session's run state. */
export interface SessionRun {
  /** Rewrites every command the session spawns (bubblewrap, a refusal, or the passthrough). */
  readonly commands: CommandWrapper;
  /** The session's control paths (share dir entries and the registered ones). */
  readonly controlPaths: ControlPathSet;
  /** Live output lines of the session's running tool calls. */
  readonly toolOutput: ToolOutputFeed;
  /** The session's background tasks. */
  readonly tasks: BackgroundTaskManager;
}
