/**
 * Finding a process by the pid it has in its own pid namespace: processes kimi starts run in
 * a pid namespace of their own (bubblewrap), where `$$` is a small number that names another
 * process (or none) on the host. A process reports `<pid> <pid namespace>` (see
 * {@link PROCESS_REF_SH}) and the test looks it up on the host by both.
 *
 * @module
 */

/** A process as it sees itself: its pid and its pid namespace (`pid:[inode]`). */
export interface ProcessRef {
  /** The pid in its own namespace. */
  readonly pid: number;
  /** `readlink /proc/<pid>/ns/pid`, e.g. `pid:[4026532301]`. */
  readonly ns: string;
}

/**
 * Shell text printing the reference of the process whose pid is in variable `$1`-style text
 * `pidExpr` (e.g. `$$` or `$!`) as `<pid> <ns>`.
 */
export function processRefSh(pidExpr: string): string {
  return `echo "${pidExpr} $(readlink /proc/${pidExpr}/ns/pid)"`;
}

/** See {@link processRefSh}: the reference of the shell itself. */
export const PROCESS_REF_SH: string = processRefSh("$$");

/** Parse `<pid> <ns>` as written by {@link processRefSh}. */
export function parseProcessRef(text: string): ProcessRef {
  const [pid, ns] = text.trim().split(/\s+/);
  if (!/^\d+$/.test(pid ?? "") || !/^pid:\[\d+\]$/.test(ns ?? "")) {
    throw new Error(`not a process reference: ${JSON.stringify(text)}`);
  }
  return { pid: Number(pid), ns };
}

/**
 * Whether the process `ref` names is gone (or a zombie nobody reaped): no process on the host
 * lives in namespace `ref.ns` with pid `ref.pid` there (the last `NSpid` entry).
 */
export async function processGone(ref: ProcessRef): Promise<boolean> {
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if ((await Deno.readLink(`/proc/${entry.name}/ns/pid`)) !== ref.ns) continue;
      const status = await Deno.readTextFile(`/proc/${entry.name}/status`);
      const nspid = /^NSpid:\s*(.*)$/m.exec(status)?.[1].trim().split(/\s+/).at(-1);
      if (Number(nspid) !== ref.pid) continue;
      if (/^State:\s*Z/m.test(status)) continue;
      return false;
    } catch {
      // gone meanwhile, or not ours to inspect
    }
  }
  return true;
}

/**
 * Resolves true once the process `ref` names is gone ({@link processGone}), false when it is
 * still there after `deadlineMs` (generous: a loaded machine may take a moment to reap a
 * namespace whose parent died).
 */
export async function waitProcessGone(ref: ProcessRef, deadlineMs = 30_000): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  while (!(await processGone(ref))) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}
