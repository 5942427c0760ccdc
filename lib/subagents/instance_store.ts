/**
 * Subagent instances of a session: `<sessionDir>/subagents/<agent_id>/` holding the
 * instance's `context.jsonl`, `wire.jsonl`, `meta.json`, `prompt.txt` and `output`
 * (reference §3). Agent ids look like `a` + 8 hex characters.
 *
 * @module
 */
import { join } from "node:path";
import * as z from "zod";
import { atomicWriteText } from "../fs/atomic_write.ts";

/** Lifecycle states of an instance. */
export const SubagentStatusSchema = z.enum([
  "idle",
  "running_foreground",
  "running_background",
  "completed",
  "failed",
  "killed",
]);
/** Lifecycle state of an instance. */
export type SubagentStatus = z.infer<typeof SubagentStatusSchema>;

/** How an instance was launched (`meta.json` `launch_spec`). */
export const LaunchSpecSchema = z.object({
  agent_id: z.string(),
  subagent_type: z.string(),
  model_override: z.string().nullable().default(null),
  effective_model: z.string().nullable().default(null),
  created_at: z.number(),
});
/** How an instance was launched. */
export type LaunchSpec = z.infer<typeof LaunchSpecSchema>;

/** Contents of `meta.json`. Times are Unix seconds (fractional). */
export const InstanceRecordSchema = z.object({
  agent_id: z.string(),
  subagent_type: z.string(),
  status: SubagentStatusSchema,
  description: z.string(),
  created_at: z.number(),
  updated_at: z.number(),
  last_task_id: z.string().nullable().default(null),
  launch_spec: LaunchSpecSchema,
});
/** Contents of `meta.json`. */
export type InstanceRecord = z.infer<typeof InstanceRecordSchema>;

/** Agent ids: `a` followed by 8 lowercase hex characters. */
export const AGENT_ID_PATTERN: RegExp = /^a[0-9a-f]{8}$/;

/** A fresh agent id. */
export function newAgentId(): string {
  return `a${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

/** No instance with that id in this session. */
export class InstanceNotFoundError extends Error {
  /** Create the error. */
  constructor(agentId: string) {
    super(`Subagent instance not found: ${agentId}`);
    this.name = "InstanceNotFoundError";
  }
}

/** Options of {@link SubagentStore.create}. */
export interface CreateInstanceOptions {
  /** Id to use (a new one when omitted). */
  agentId?: string;
  /** Subagent type name. */
  subagentType: string;
  /** Short task description. */
  description: string;
  /** `model` parameter of the Agent call. */
  modelOverride: string | null;
  /** Model alias the instance runs with (null: the parent's model). */
  effectiveModel: string | null;
}

/** Changes applied by {@link SubagentStore.update}. */
export interface InstanceUpdate {
  /** New status. */
  status?: SubagentStatus;
  /** New description. */
  description?: string;
  /** Background task that last ran the instance. */
  lastTaskId?: string | null;
  /** Replace the launch spec's model fields. */
  launchSpec?: Partial<Pick<LaunchSpec, "model_override" | "effective_model">>;
}

/** The subagent instances of one session. */
export class SubagentStore {
  /** `<sessionDir>/subagents`. */
  readonly root: string;

  /** A store for the session at `sessionDir`. */
  constructor(sessionDir: string) {
    this.root = join(sessionDir, "subagents");
  }

  /** Directory of an instance. */
  instanceDir(agentId: string): string {
    return join(this.root, agentId);
  }
  /** `context.jsonl` of an instance. */
  contextPath(agentId: string): string {
    return join(this.instanceDir(agentId), "context.jsonl");
  }
  /** `wire.jsonl` of an instance. */
  wirePath(agentId: string): string {
    return join(this.instanceDir(agentId), "wire.jsonl");
  }
  /** `meta.json` of an instance. */
  metaPath(agentId: string): string {
    return join(this.instanceDir(agentId), "meta.json");
  }
  /** `prompt.txt` of an instance (the last prompt it was given). */
  promptPath(agentId: string): string {
    return join(this.instanceDir(agentId), "prompt.txt");
  }
  /** `output` of an instance (the last summary it produced). */
  outputPath(agentId: string): string {
    return join(this.instanceDir(agentId), "output");
  }

  /** Create an instance directory with empty files and an `idle` record. */
  async create(opts: CreateInstanceOptions): Promise<InstanceRecord> {
    const agentId = opts.agentId ?? newAgentId();
    await Deno.mkdir(this.instanceDir(agentId), { recursive: true });
    for (const p of [this.contextPath, this.wirePath, this.promptPath, this.outputPath]) {
      const f = await Deno.open(p.call(this, agentId), { create: true, append: true });
      f.close();
    }
    const now = Date.now() / 1000;
    const record: InstanceRecord = {
      agent_id: agentId,
      subagent_type: opts.subagentType,
      status: "idle",
      description: opts.description,
      created_at: now,
      updated_at: now,
      last_task_id: null,
      launch_spec: {
        agent_id: agentId,
        subagent_type: opts.subagentType,
        model_override: opts.modelOverride,
        effective_model: opts.effectiveModel,
        created_at: now,
      },
    };
    await this.write(record);
    return record;
  }

  /** Write a record to `meta.json` (atomically). */
  async write(record: InstanceRecord): Promise<void> {
    await atomicWriteText(this.metaPath(record.agent_id), JSON.stringify(record, null, 2));
  }

  /** An instance's record, or null when unknown or unreadable. */
  async get(agentId: string): Promise<InstanceRecord | null> {
    if (!AGENT_ID_PATTERN.test(agentId)) return null;
    let text: string;
    try {
      text = await Deno.readTextFile(this.metaPath(agentId));
    } catch {
      return null;
    }
    try {
      return InstanceRecordSchema.parse(JSON.parse(text));
    } catch {
      return null;
    }
  }

  /** An instance's record; throws {@link InstanceNotFoundError} when unknown. */
  async require(agentId: string): Promise<InstanceRecord> {
    const rec = await this.get(agentId);
    if (!rec) throw new InstanceNotFoundError(agentId);
    return rec;
  }

  /** Apply changes to an instance's record and persist it. */
  async update(agentId: string, change: InstanceUpdate): Promise<InstanceRecord> {
    const cur = await this.require(agentId);
    const next: InstanceRecord = {
      ...cur,
      status: change.status ?? cur.status,
      description: change.description ?? cur.description,
      last_task_id: change.lastTaskId !== undefined ? change.lastTaskId : cur.last_task_id,
      launch_spec: { ...cur.launch_spec, ...(change.launchSpec ?? {}) },
      updated_at: Date.now() / 1000,
    };
    await this.write(next);
    return next;
  }

  /** Every readable instance, most recently updated first. */
  async list(): Promise<InstanceRecord[]> {
    const out: InstanceRecord[] = [];
    try {
      for await (const e of Deno.readDir(this.root)) {
        if (!e.isDirectory) continue;
        const rec = await this.get(e.name);
        if (rec) out.push(rec);
      }
    } catch {
      return [];
    }
    return out.sort((a, b) => b.updated_at - a.updated_at);
  }
}
