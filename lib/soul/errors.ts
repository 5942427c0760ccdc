/**
 * Errors that end a turn. Their class names and messages are observable (print mode output,
 * wire error responses).
 *
 * @module
 */

/** No usable model is configured. */
export class LLMNotSet extends Error {
  /** Create the error. */
  constructor() {
    super("LLM not set");
    this.name = "LLMNotSet";
  }
}

/** The model lacks a capability the input needs (images, video, thinking). */
export class LLMNotSupported extends Error {
  /** Missing capabilities. */
  readonly capabilities: string[];
  /** Create the error. */
  constructor(model: string, capabilities: string[]) {
    const what = capabilities.length > 1
      ? `capabilities: ${capabilities.join(", ")}`
      : `capability: ${capabilities[0]}`;
    super(`LLM model '${model}' does not support required ${what}.`);
    this.name = "LLMNotSupported";
    this.capabilities = capabilities;
  }
}

/** The turn used up `max_steps_per_turn`. */
export class MaxStepsReached extends Error {
  /** Steps taken. */
  readonly nSteps: number;
  /** Create the error. */
  constructor(nSteps: number) {
    super(`Max number of steps reached: ${nSteps}`);
    this.name = "MaxStepsReached";
    this.nSteps = nSteps;
  }
}

/** The turn was cancelled by the user. */
export class RunCancelled extends Error {
  /** Create the error. */
  constructor() {
    super("Interrupted by user");
    this.name = "RunCancelled";
  }
}
