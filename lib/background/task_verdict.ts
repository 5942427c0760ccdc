/**
 * How a background task ended, as record fields: one judgement shared by tasks run in this
 * process and those run by a detached worker.
 *
 * @module
 */
import { exitCodeOf, type ShellOutcome } from "../process/shell_process.ts";
import type { TaskRecord } from "./task_record.ts";

/** How an in-process task's body ended (an abort is judged by the manager). */
export type InProcessOutcome = { ok: true } | { ok: false; reason: string };

/** How a shell task ended, as record fields. */
export function shellVerdict(rec: TaskRecord, outcome: ShellOutcome): Partial<TaskRecord> {
  if (outcome.kind === "timeout") {
    return {
      status: "failed",
      interrupted: true,
      timed_out: true,
      exit_code: exitCodeOf(outcome),
      failure_reason: `Command timed out after ${rec.timeout_s}s`,
    };
  }
  if (outcome.kind === "terminated" || rec.kill_requested_at !== null) {
    return {
      status: "killed",
      interrupted: true,
      exit_code: exitCodeOf(outcome),
      failure_reason: rec.kill_reason ?? "Killed",
    };
  }
  const code = exitCodeOf(outcome);
  return code === 0 ? { exit_code: code, status: "completed", failure_reason: null } : {
    exit_code: code,
    status: "failed",
    failure_reason: `Command failed with exit code ${code}`,
  };
}

/** How an in-process task ended, as record fields. */
export function inProcessVerdict(
  rec: TaskRecord,
  timedOut: boolean,
  outcome: InProcessOutcome,
): Partial<TaskRecord> {
  if (timedOut) {
    const label = rec.kind === "agent" ? "Agent task" : "Task";
    return {
      status: "failed",
      interrupted: true,
      timed_out: true,
      failure_reason: `${label} timed out after ${rec.timeout_s}s`,
    };
  }
  if (rec.kill_requested_at !== null) {
    return { status: "killed", interrupted: true, failure_reason: rec.kill_reason ?? "Killed" };
  }
  return outcome.ok
    ? { status: "completed" }
    : { status: "failed", failure_reason: outcome.reason };
}
