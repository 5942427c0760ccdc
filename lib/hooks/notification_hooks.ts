/**
 * The `Notification` hook event: what needs the user's attention (an approval or a question
 * waits) and what finished while they may have looked away (a background task, a goal run).
 * Each becomes one {@link Attention}; {@link fireNotification} runs the `Notification` hooks
 * with the reference's input fields (`sink, notification_type, title, body, severity`, target =
 * the notification type) and the shell rings the terminal for the same ones.
 *
 * Notification types: `approval.requested`, `question.asked`, `task.<reason>` (as the wire
 * `Notification` event's type) and `goal.<outcome>`.
 *
 * @module
 */
import type { Subscription } from "../wire/broadcast.ts";
import {
  type EventPayload,
  isRequest,
  type Question,
  type RequestPayload,
  type WireMessage,
} from "../wire/messages.ts";
import type { HookEngine } from "./engine.ts";

/** Something the user should know about now. */
export interface Attention {
  /** Notification type (the hooks' matcher target). */
  type: string;
  /** One-line title. */
  title: string;
  /** Details (may be empty). */
  body: string;
  /** `info`, `success`, `warning` or `error`. */
  severity: string;
}

/**
 * The `sink` of every Notification hook input: the notice is for the user (the front end
 * shows it), not for the model.
 */
export const NOTIFICATION_SINK = "user";

/** Run the Notification hooks for `attention` (fire-and-forget; never throws). */
export function fireNotification(hooks: HookEngine, attention: Attention): void {
  hooks.fire("Notification", {
    target: attention.type,
    input: {
      sink: NOTIFICATION_SINK,
      notification_type: attention.type,
      title: attention.title,
      body: attention.body,
      severity: attention.severity,
    },
  });
}

/**
 * Fire the Notification hooks for every approval request published on `hub` (the root
 * approval hub: the agent's and its subagents' approvals). Returns the function that stops.
 */
export function notifyApprovals(hub: Subscription<WireMessage>, hooks: HookEngine): () => void {
  void (async () => {
    for await (const msg of hub) {
      if (isRequest(msg) && msg.type === "ApprovalRequest") {
        fireNotification(
          hooks,
          approvalAttention(msg.payload as RequestPayload<"ApprovalRequest">),
        );
      }
    }
  })();
  return () => hub.unsubscribe();
}

/** An approval waits for the user. */
export function approvalAttention(p: RequestPayload<"ApprovalRequest">): Attention {
  const who = p.subagent_type ? ` (${p.subagent_type} agent)` : "";
  return {
    type: "approval.requested",
    title: `Approval needed${who}: ${p.sender}`,
    body: p.description || p.action,
    severity: "warning",
  };
}

/** The model asks the user questions. */
export function questionAttention(questions: readonly Question[]): Attention {
  return {
    type: "question.asked",
    title: questions.length === 1 ? "A question waits for you" : "Questions wait for you",
    body: questions.map((q) => q.question).join("\n"),
    severity: "info",
  };
}

/** A background task finished (from its wire `Notification` event). */
export function taskAttention(n: EventPayload<"Notification">): Attention {
  return { type: n.type, title: n.title, body: n.body, severity: n.severity };
}

/** A goal run ended; null while it goes on. */
export function goalAttention(p: EventPayload<"GoalUpdate">): Attention | null {
  if (p.outcome === null) return null;
  const objective = p.goal?.objective ?? "";
  const reason = p.goal?.reason ?? "";
  switch (p.outcome) {
    case "achieved":
      return {
        type: "goal.achieved",
        title: "Goal achieved",
        body: objective,
        severity: "success",
      };
    case "blocked":
      return {
        type: "goal.blocked",
        title: "Goal blocked",
        body: [objective, reason].filter(Boolean).join("\n"),
        severity: "warning",
      };
    case "budget_exhausted":
      return {
        type: "goal.budget_exhausted",
        title: "Goal budget exhausted",
        body: objective,
        severity: "warning",
      };
    case "paused":
    case "cancelled":
      return {
        type: `goal.${p.outcome}`,
        title: "Goal paused",
        body: [objective, reason].filter(Boolean).join("\n"),
        severity: "info",
      };
  }
}
