/**
 * Where commander writes and what it knows of the terminal: Deno's stdout and stderr, their
 * width and colour support read through Deno rather than Node's `process` (whose polyfill would
 * otherwise load for every `kimi --help`). The answers are commander's own defaults. Colour codes
 * are stripped by `strip-ansi` rather than `node:util`'s `stripVTControlCharacters`, which
 * commander would otherwise call for every help text (loading Node's compatibility layer).
 *
 * @module
 */
import stripAnsi from "strip-ansi";

/** Reads one environment variable; `undefined` when unset or not readable. */
export type OutputEnvReader = (name: string) => string | undefined;

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The colour setting the environment forces, as commander reads it: `false` for `NO_COLOR`
 * (or `FORCE_COLOR` 0/false), `true` for `FORCE_COLOR` or `CLICOLOR_FORCE`, else `undefined`.
 */
export function forcedColor(getEnv: OutputEnvReader = readEnv): boolean | undefined {
  const force = getEnv("FORCE_COLOR");
  if (getEnv("NO_COLOR") || force === "0" || force === "false") return false;
  if (force || getEnv("CLICOLOR_FORCE") !== undefined) return true;
  return undefined;
}

/** A standard stream as far as commander's output needs it. */
export interface OutputStream {
  writeSync(p: Uint8Array): number;
  isTerminal(): boolean;
}

/** The width help is wrapped to: the terminal's, else commander's 80 columns. */
function helpWidth(stream: OutputStream): number {
  try {
    return stream.isTerminal() ? Deno.consoleSize().columns : 80;
  } catch {
    return 80;
  }
}

function hasColors(stream: OutputStream, getEnv: OutputEnvReader): boolean {
  return forcedColor(getEnv) ?? (stream.isTerminal() && getEnv("TERM") !== "dumb");
}

/**
 * commander's `configureOutput` settings for kimi (parse errors are reported by the caller),
 * on `streams` (default Deno's stdout and stderr).
 */
export function commanderOutput(
  getEnv: OutputEnvReader = readEnv,
  streams: { stdout: OutputStream; stderr: OutputStream } = {
    stdout: Deno.stdout,
    stderr: Deno.stderr,
  },
): {
  writeOut: (s: string) => void;
  writeErr: (s: string) => void;
  outputError: () => void;
  getOutHelpWidth: () => number;
  getErrHelpWidth: () => number;
  getOutHasColors: () => boolean;
  getErrHasColors: () => boolean;
  stripColor: (s: string) => string;
} {
  const write = (stream: OutputStream, s: string) => {
    const bytes = new TextEncoder().encode(s);
    for (let done = 0; done < bytes.length;) done += stream.writeSync(bytes.subarray(done));
  };
  return {
    writeOut: (s) => write(streams.stdout, s),
    writeErr: (s) => write(streams.stderr, s),
    outputError: () => {},
    getOutHelpWidth: () => helpWidth(streams.stdout),
    getErrHelpWidth: () => helpWidth(streams.stderr),
    getOutHasColors: () => hasColors(streams.stdout, getEnv),
    getErrHasColors: () => hasColors(streams.stderr, getEnv),
    stripColor: stripAnsi,
  };
}

/**
 * commander's `configureHelp` settings for kimi: the width help lays out is the text's length
 * without colour codes (commander's own measure, by `strip-ansi`).
 */
export function commanderHelp(): { displayWidth: (s: string) => number } {
  return { displayWidth: (s) => stripAnsi(s).length };
}
