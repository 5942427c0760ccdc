/**
 * The soul-level slash commands, in the order clients list them.
 *
 * @module
 */
import {
  afkCommand,
  clearCommand,
  compactCommand,
  type SoulCommand,
  yoloCommand,
} from "../slash_commands.ts";
import { addDirCommand } from "./add_dir.ts";
import { btwCommand } from "./btw.ts";
import { exportCommand } from "./export.ts";
import { goalCommand } from "./goal.ts";
import { importCommand } from "./import.ts";
import { initCommand } from "./init.ts";
import { planCommand } from "./plan.ts";
import { swarmCommand } from "./swarm.ts";
import { undoCommand } from "./undo.ts";

/** Soul commands available in every UI. */
export const SOUL_COMMANDS: readonly SoulCommand[] = [
  initCommand,
  compactCommand,
  clearCommand,
  yoloCommand,
  afkCommand,
  planCommand,
  addDirCommand,
  exportCommand,
  importCommand,
  undoCommand,
  btwCommand,
  goalCommand,
  swarmCommand,
];
