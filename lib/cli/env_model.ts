/**
 * A model from the environment alone: with no model configured, `OPENAI_BASE_URL` and
 * `OPENAI_API_KEY` name an OpenAI-compatible server; its first listed model is used when
 * neither `OPENAI_MODEL` nor `KIMI_MODEL_NAME` names one.
 *
 * @module
 */
import type { Config } from "../config/schema.ts";

/** Environment reader. */
export type GetEnv = (key: string) => string | undefined;

/**
 * Wrap `getEnv` so `OPENAI_MODEL` holds the server's first model when the environment names a
 * server but no model and the config names no usable model. Unchanged otherwise, or when the
 * server cannot be asked (the "LLM is not set" message then explains what is missing).
 */
export async function withDiscoveredModel(
  config: Config,
  modelAlias: string | undefined,
  getEnv: GetEnv,
): Promise<GetEnv> {
  const base = getEnv("OPENAI_BASE_URL");
  const alias = modelAlias || config.default_model;
  if (!base || getEnv("KIMI_BASE_URL") || getEnv("OPENAI_MODEL") || getEnv("KIMI_MODEL_NAME")) {
    return getEnv;
  }
  if (alias && Object.hasOwn(config.models, alias)) return getEnv;
  try {
    const key = getEnv("OPENAI_API_KEY");
    const res = await fetch(`${base.replace(/\/+$/, "")}/models`, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return getEnv;
    }
    const body = await res.json() as { data?: { id?: unknown }[] };
    const id = body.data?.find((m) => typeof m.id === "string" && m.id)?.id as string | undefined;
    if (!id) return getEnv;
    return (k) => (k === "OPENAI_MODEL" ? id : getEnv(k));
  } catch {
    return getEnv;
  }
}
