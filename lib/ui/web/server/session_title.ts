/**
 * `POST /api/sessions/{id}/generate-title` (reference §A6): a short title for a session from
 * its first exchange, asked of the default model; the first user text (squashed to 50
 * characters) is the fallback, stored as final after three failed attempts. A title set
 * meanwhile (a rename) wins.
 *
 * @module
 */
import { extractText, normalizeMessage } from "../../../llm/message.ts";
import { generate } from "../../../llm/generate.ts";
import type { LLM } from "../../../llm/provider.ts";
import { log } from "../../../log.ts";
import type { Session } from "../../../session/session.ts";
import { loadState, updateState } from "../../../session/state.ts";
import { shortenTitle } from "../../../session/title.ts";
import { FILES_ONLY_MESSAGE } from "./uploads.ts";

/** Failed model attempts after which the fallback title is final. */
export const MAX_TITLE_ATTEMPTS = 3;
/** Longest title. */
export const TITLE_WIDTH = 50;

const SYSTEM_PROMPT = "You write titles for coding-assistant conversations. Answer with the " +
  "title only: at most 50 characters, no quotes, no trailing punctuation.";

function squash(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * What the user wrote in a prompt the page sent with uploads: the `<uploaded_files>` list, the
 * image, video and document wrappers and the files-only marker taken out; the files' names when
 * nothing else is left (a prompt of files only).
 */
export function promptForTitle(text: string): string {
  const listed = /<uploaded_files>\n?([\s\S]*?)\n?<\/uploaded_files>/.exec(text)?.[1] ?? "";
  const words = squash(
    text.replace(/<uploaded_files>[\s\S]*?<\/uploaded_files>/g, " ")
      .replace(/<document\b[^>]*>[\s\S]*?<\/document>/g, " ")
      .replace(/<\/?(image|video|audio)\b[^>]*>/g, " ")
      .replaceAll(FILES_ONLY_MESSAGE, " "),
  );
  if (words) return words;
  return listed.split("\n").map((l) => l.replace(/^\d+\.\s*/, "").trim().split("/").pop() ?? "")
    .filter(Boolean).join(", ");
}

/**
 * A session's title before one is set or generated: its first prompt as the user wrote it
 * (uploads left out, see {@link promptForTitle}), shortened; `Untitled` without one.
 */
export async function fallbackTitle(session: Session): Promise<string> {
  const first = await session.firstPrompt();
  return shortenTitle(promptForTitle(first ?? ""), TITLE_WIDTH) || "Untitled";
}

/** The model's answer as a title: first line, quotes stripped, shortened. */
export function cleanTitle(text: string): string {
  const line = squash(text.split("\n").find((l) => l.trim()) ?? "");
  return shortenTitle(line.replace(/^["'`“”‘’]+|["'`“”‘’]+$/g, "").trim(), TITLE_WIDTH);
}

/** Options of {@link generateTitle}. */
export interface GenerateTitleOptions {
  /** The session. */
  session: Session;
  /** The model to ask (null: only the fallback). */
  llm: LLM | null;
  /** The user's message (default: the session's first prompt). */
  userMessage?: string;
  /** The assistant's answer, when known. */
  assistantResponse?: string;
}

/** Title the session; resolves with the title now stored. */
export async function generateTitle(opts: GenerateTitleOptions): Promise<string> {
  const { session } = opts;
  const before = await loadState(session.dir);
  if (before.title_generated && before.custom_title) return before.custom_title;
  const user = promptForTitle(opts.userMessage ?? await session.firstPrompt() ?? "");
  const fallback = shortenTitle(user, TITLE_WIDTH) || "Untitled";
  let title: string | null = null;
  if (before.title_generate_attempts < MAX_TITLE_ATTEMPTS && opts.llm && user) {
    try {
      const asked = `User: ${user.slice(0, 300)}` +
        (opts.assistantResponse
          ? `\nAssistant: ${squash(opts.assistantResponse).slice(0, 300)}`
          : "");
      const cap = opts.llm.completionTokenCap;
      const result = await generate(opts.llm.provider, {
        systemPrompt: SYSTEM_PROMPT,
        tools: [],
        history: [
          normalizeMessage({ role: "user", content: `Title this conversation:\n${asked}` }),
        ],
        maxCompletionTokens: cap && cap > 0 ? Math.min(512, cap) : 512,
        signal: AbortSignal.timeout(30_000),
      });
      title = cleanTitle(extractText(result.message.content, "")) || null;
    } catch (err) {
      log("WARNING", "web", `title generation failed: ${(err as Error).message}`);
    }
  }
  const state = await updateState(session.dir, (st) => {
    // a title set meanwhile (a rename) wins
    if (st.custom_title !== before.custom_title && st.title_generated) return;
    if (title) {
      st.custom_title = title;
      st.title_generated = true;
    } else {
      st.title_generate_attempts += opts.llm ? 1 : 0;
      st.custom_title = fallback;
      st.title_generated = !opts.llm || st.title_generate_attempts >= MAX_TITLE_ATTEMPTS;
    }
  });
  session.state.custom_title = state.custom_title;
  session.state.title_generated = state.title_generated;
  session.state.title_generate_attempts = state.title_generate_attempts;
  return state.custom_title ?? fallback;
}
