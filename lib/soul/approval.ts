/**
 * Approvals (reference §8, with approval rules): yolo/afk state, the session's rule grants,
 * and the runtime that checks the saved rules before asking and holds pending requests until a
 * UI answers them.
 *
 * Order: a deny rule refuses (also in yolo/afk); yolo/afk approve; an ask rule asks; a call
 * whose every part is allowed by a rule or a session grant is approved; anything else asks.
 * "Approve for this session" grants the derived rule patterns (e.g. `Shell(git status *)`)
 * until the turn that made the grant is undone; "always" saves them to the user's config.
 *
 * @module
 */
import { evaluateRules, type RuleContext, type RuleVerdict } from "../permission/evaluate.ts";
import { PermissionRuleSet } from "../permission/rule_set.ts";
import { parseRulePattern, type PermissionRule, ruleLocation } from "../permission/rules.ts";
import type { ApprovalAsk, ApprovalOutcome, ApprovalSubject } from "../tooling/tool.ts";
import { log } from "../log.ts";
import { approvalChoices } from "../wire/approval_options.ts";
import { BroadcastQueue, type Subscription } from "../wire/broadcast.ts";
import { brief } from "../wire/display.ts";
import { event, PendingRequest, type WireMessage } from "../wire/messages.ts";

/** Where an approval request comes from. */
export interface ApprovalSource {
  /** `foreground_turn` or `background_agent`. */
  kind: "foreground_turn" | "background_agent";
  /** Id of the turn or task. */
  id: string;
  /** Subagent instance id, for subagent requests. */
  agentId?: string | null;
  /** Subagent type, for subagent requests. */
  subagentType?: string | null;
  /** Human description of the source. */
  description?: string | null;
}

/** A session grant: a rule pattern allowed until the turn that granted it is undone. */
export interface SessionGrant {
  /** Rule pattern, e.g. `Shell(git status *)`. */
  pattern: string;
  /** The last context checkpoint when it was granted (undoing past it revokes the grant). */
  checkpoint: number;
}

/** Persisted approval flags. */
export interface ApprovalSnapshot {
  /** Auto-approve everything. */
  yolo: boolean;
  /** Away from keyboard (persisted). */
  afk: boolean;
  /**
   * Legacy whole-action whitelist of older sessions: kept in the file, no longer honoured
   * (it approved every command once one was approved).
   */
  auto_approve_actions: string[];
  /** Rule patterns granted for the session. */
  session_rules: SessionGrant[];
}

/** Yolo/afk flags and the session grants, shared by the root agent and its subagents. */
export class ApprovalState {
  #yolo: boolean;
  #afk: boolean;
  #runtimeAfk: boolean;
  #actions: Set<string>;
  #grants: SessionGrant[];
  readonly #persist: (s: ApprovalSnapshot) => Promise<void>;

  /** Create the state. `persist` is called after every change. */
  constructor(opts: {
    yolo?: boolean;
    afk?: boolean;
    runtimeAfk?: boolean;
    actions?: Iterable<string>;
    grants?: Iterable<SessionGrant>;
    persist?: (s: ApprovalSnapshot) => Promise<void>;
  } = {}) {
    this.#yolo = opts.yolo ?? false;
    this.#afk = opts.afk ?? false;
    this.#runtimeAfk = opts.runtimeAfk ?? false;
    this.#actions = new Set(opts.actions ?? []);
    this.#grants = [...(opts.grants ?? [])].filter((g) =>
      typeof parseRulePattern(g.pattern) !== "string"
    );
    this.#persist = opts.persist ?? (() => Promise.resolve());
  }

  /** Yolo flag. */
  get yolo(): boolean {
    return this.#yolo;
  }
  /** Persisted afk flag. */
  get afk(): boolean {
    return this.#afk;
  }
  /** Whether no user is present (persisted afk or runtime afk such as print mode). */
  get isAfk(): boolean {
    return this.#afk || this.#runtimeAfk;
  }
  /** Whether every request is approved without asking. */
  get autoApprove(): boolean {
    return this.#yolo || this.isAfk;
  }
  /** Rule patterns granted for the session, oldest first. */
  get grants(): readonly SessionGrant[] {
    return this.#grants;
  }

  /** The session grants as allow rules. */
  sessionRules(): PermissionRule[] {
    return this.#grants.map((g) => {
      const parsed = parseRulePattern(g.pattern);
      const p = typeof parsed === "string" ? { tool: "", arg: null } : parsed;
      return {
        ...p,
        pattern: g.pattern,
        decision: "allow" as const,
        scope: "session" as const,
        source: "session",
        line: null,
        reason: "",
        index: null,
      };
    });
  }

  /** The persisted form. */
  snapshot(): ApprovalSnapshot {
    return {
      yolo: this.#yolo,
      afk: this.#afk,
      auto_approve_actions: [...this.#actions],
      session_rules: this.#grants.map((g) => ({ ...g })),
    };
  }

  /** Set yolo. */
  async setYolo(on: boolean): Promise<void> {
    this.#yolo = on;
    await this.#persist(this.snapshot());
  }
  /** Set persisted afk. */
  async setAfk(on: boolean): Promise<void> {
    this.#afk = on;
    await this.#persist(this.snapshot());
  }
  /** Set runtime afk (not persisted). */
  setRuntimeAfk(on: boolean): void {
    this.#runtimeAfk = on;
  }
  /** Grant rule patterns for the session, as of context checkpoint `checkpoint`. */
  async grant(patterns: readonly string[], checkpoint: number): Promise<void> {
    const added = patterns.filter((p) => !this.#grants.some((g) => g.pattern === p));
    if (added.length === 0) return;
    this.#grants.push(...added.map((pattern) => ({ pattern, checkpoint })));
    await this.#persist(this.snapshot());
  }

  /** Revoke one grant; returns whether it existed. */
  async revoke(pattern: string): Promise<boolean> {
    const before = this.#grants.length;
    this.#grants = this.#grants.filter((g) => g.pattern !== pattern);
    if (this.#grants.length === before) return false;
    await this.#persist(this.snapshot());
    return true;
  }

  /** Revoke the grants made at or after context checkpoint `checkpoint`; returns them. */
  async revokeSince(checkpoint: number): Promise<string[]> {
    const gone = this.#grants.filter((g) => g.checkpoint >= checkpoint).map((g) => g.pattern);
    if (gone.length === 0) return [];
    this.#grants = this.#grants.filter((g) => g.checkpoint < checkpoint);
    await this.#persist(this.snapshot());
    return gone;
  }
}

interface PendingApproval {
  request: PendingRequest<"ApprovalRequest">;
  source: ApprovalSource;
  /** Whether the call is now allowed by the rules (after a grant). */
  allowedNow: () => Promise<boolean>;
}

/** Options of {@link ApprovalRuntime}. */
export interface ApprovalRuntimeOptions {
  /** Saved rules (default: none). */
  rules?: PermissionRuleSet;
  /** Work dir and home for path rules (default: the current directory). */
  ruleContext?: RuleContext;
  /** The current last context checkpoint of the root agent (session grants are tagged with it). */
  checkpoint?: () => number;
}

/** The message a tool returns when a rule refused its call. */
export function denialMessage(verdict: Extract<RuleVerdict, { kind: "deny" }>): string {
  const r = verdict.rule;
  const why = r.reason ? ` Reason: ${r.reason}` : "";
  return `The tool call was refused by the permission rule \`${r.pattern}\` ` +
    `(${ruleLocation(r)}), which denies ${verdict.what}.${why} ` +
    "Do not retry it or work around the rule; choose another approach or ask the user.";
}

function defaultContext(): RuleContext {
  let workDir = "/";
  try {
    workDir = Deno.cwd();
  } catch {
    // no cwd permission: relative path rules match nothing
  }
  return { workDir, home: null };
}

/**
 * Pending approval requests of a session. Requests are published on the session's root hub,
 * which every UI subscribes to; the answer resolves the waiting tool.
 */
export class ApprovalRuntime {
  /** Session-level broadcast of approval requests and their responses. */
  readonly hub: BroadcastQueue<WireMessage> = new BroadcastQueue();
  readonly #pending = new Map<string, PendingApproval>();
  readonly state: ApprovalState;
  readonly #rules: PermissionRuleSet;
  readonly #ctx: RuleContext;
  #checkpoint: () => number;

  /** Create a runtime over a state. */
  constructor(state: ApprovalState, opts: ApprovalRuntimeOptions = {}) {
    this.state = state;
    this.#ctx = opts.ruleContext ?? defaultContext();
    this.#rules = opts.rules ?? PermissionRuleSet.empty(this.#ctx.workDir);
    this.#checkpoint = opts.checkpoint ?? (() => 0);
  }

  /** The saved rules. */
  get rules(): PermissionRuleSet {
    return this.#rules;
  }

  /** Every rule in force: user, project, then session grants. */
  effectiveRules(): PermissionRule[] {
    return [...this.#rules.all(), ...this.state.sessionRules()];
  }

  /** Set where session grants are tagged from (the root agent's context). */
  setCheckpointSource(fn: () => number): void {
    this.#checkpoint = fn;
  }

  /** Evaluate the rules for a call (no side effects). */
  evaluate(sender: string, subject: ApprovalSubject): Promise<RuleVerdict> {
    return evaluateRules({ sender, subject, rules: this.effectiveRules(), ctx: this.#ctx });
  }

  /** Subscribe to requests and responses. */
  subscribe(): Subscription<WireMessage> {
    return this.hub.subscribe();
  }

  /** Requests still waiting for an answer. */
  pending(): PendingRequest<"ApprovalRequest">[] {
    return [...this.#pending.values()].map((p) => p.request);
  }

  /** Ask for approval; resolves when answered (or decided by rules, yolo or afk). */
  async request(opts: {
    sender: string;
    toolCallId: string;
    ask: ApprovalAsk;
    source: ApprovalSource;
  }): Promise<ApprovalOutcome> {
    const subject = opts.ask.subject ?? { kind: "tool" as const };
    // Auto-approval with no deny rule: nothing a rule could say changes the answer, so the
    // command is not parsed (the parser is the costliest part of a step).
    if (
      this.state.autoApprove && opts.ask.mustAsk !== true &&
      !this.effectiveRules().some((r) => r.decision === "deny")
    ) {
      return { approved: true };
    }
    const verdict = await this.evaluate(opts.sender, subject);
    if (verdict.kind === "deny") {
      return {
        approved: false,
        feedback: "",
        denial: { message: denialMessage(verdict), rule: verdict.rule.pattern },
      };
    }
    // Changes to kimi's control files: always a human answer, never yolo, a rule or a grant.
    const mustAsk = opts.ask.mustAsk === true;
    if (mustAsk && this.state.isAfk) {
      return {
        approved: false,
        feedback: "No user is present to approve this change, and it is never auto-approved.",
      };
    }
    if (this.state.autoApprove && !mustAsk) {
      if (verdict.kind === "ask" && verdict.unparsable !== null && this.#hasShellDeny()) {
        return {
          approved: false,
          feedback: "",
          denial: {
            message: "The command could not be checked against the deny rules " +
              `(${verdict.unparsable}), so it was refused. Rewrite it as plain commands the ` +
              "shell grammar accepts.",
            rule: null,
          },
        };
      }
      return { approved: true };
    }
    // (A must-ask request is asked even when a rule would allow it.)
    const asked = verdict.kind === "ask" ? verdict : null;
    if (!mustAsk) {
      if (asked === null) return { approved: true };
      if (opts.ask.unruled === "allow" && asked.rule === null && asked.unparsable === null) {
        return { approved: true };
      }
    }

    const grant = asked && !mustAsk ? asked.grant : [];
    const display = [...opts.ask.display];
    if (asked?.unparsable) {
      display.push(brief(`Approval rules could not be applied: ${asked.unparsable}.`));
    } else if (asked?.control) {
      display.push(brief(`No rule or grant may approve this: ${asked.control}.`));
    } else if (asked?.rule) {
      display.push(
        brief(
          `Asked because of the rule \`${asked.rule.pattern}\` (${ruleLocation(asked.rule)}).`,
        ),
      );
    }
    const ruleFile = grant.length > 0 ? this.#rules.userFile : null;
    const id = crypto.randomUUID();
    const req = new PendingRequest("ApprovalRequest", {
      id,
      tool_call_id: opts.toolCallId,
      sender: opts.sender,
      action: opts.ask.action,
      description: opts.ask.description,
      source_kind: opts.source.kind,
      source_id: opts.source.id,
      agent_id: opts.source.agentId ?? null,
      subagent_type: opts.source.subagentType ?? null,
      source_description: opts.source.description ?? null,
      display,
      grant_patterns: grant,
      rule_file: ruleFile,
      options: approvalChoices({ grant_patterns: grant, rule_file: ruleFile })
        .map(({ id, label }) => ({ id, label })),
    });
    this.#pending.set(id, {
      request: req,
      source: opts.source,
      allowedNow: async () =>
        !mustAsk && (await this.evaluate(opts.sender, subject)).kind === "allow",
    });
    this.hub.publish(req);
    const result = await req.result;
    this.#pending.delete(id);
    this.hub.publish(event("ApprovalResponse", {
      request_id: id,
      response: result.response,
      feedback: result.feedback ?? "",
    }));
    if (result.response === "reject") {
      return { approved: false, feedback: result.feedback ?? "" };
    }
    // A deny rule added while the question waited (e.g. with /permissions) still wins.
    const now = await this.evaluate(opts.sender, subject);
    if (now.kind === "deny") {
      return {
        approved: false,
        feedback: "",
        denial: { message: denialMessage(now), rule: now.rule.pattern },
      };
    }
    switch (result.response) {
      case "approve":
        return { approved: true };
      case "approve_for_session":
        await this.grantForSession(grant);
        return { approved: true };
      case "approve_always":
        await this.#saveRules(grant);
        return { approved: true };
    }
  }

  /** Grant rule patterns for the session, then approve pending requests they now allow. */
  async grantForSession(patterns: readonly string[]): Promise<void> {
    if (patterns.length === 0) return;
    await this.state.grant(patterns, this.#checkpoint());
    await this.#approveNowAllowed();
  }

  async #saveRules(patterns: readonly string[]): Promise<void> {
    if (patterns.length === 0) return;
    try {
      await this.#rules.save(patterns.map((pattern) => ({ pattern, decision: "allow" as const })));
      await this.#approveNowAllowed();
    } catch (err) {
      // The call itself was approved; keep the user's intent for this session at least.
      log("ERROR", "approval", `could not save rules: ${err instanceof Error ? err.message : err}`);
      await this.grantForSession(patterns);
    }
  }

  async #approveNowAllowed(): Promise<void> {
    for (const p of [...this.#pending.values()]) {
      if (p.request.settled || !(await p.allowedNow())) continue;
      p.request.resolve({ request_id: p.request.payload.id, response: "approve", feedback: "" });
    }
  }

  #hasShellDeny(): boolean {
    return this.effectiveRules().some((r) =>
      r.decision === "deny" && (r.tool === "Shell" || r.tool === "*" || /[*?]/.test(r.tool))
    );
  }

  /** Reject every pending request of a source (turn ended or was cancelled). */
  cancelSource(sourceId: string): void {
    for (const p of [...this.#pending.values()]) {
      if (p.source.id === sourceId) {
        p.request.resolve({ request_id: p.request.payload.id, response: "reject", feedback: "" });
      }
    }
  }

  /** Reject every pending foreground request (wire closed). */
  cancelForeground(): void {
    for (const p of [...this.#pending.values()]) {
      if (p.source.kind === "foreground_turn") {
        p.request.resolve({ request_id: p.request.payload.id, response: "reject", feedback: "" });
      }
    }
  }
}
