/**
 * Driving `main.ts` in a real PTY under tmux: start, send keys, poll the captured screen.
 * Each instance uses its own tmux server socket, killed by {@link TmuxKimi.close}.
 *
 * @module
 */
import { denoDir, type KimiSandbox, MAIN_TS } from "./kimi_process.ts";

/** A kimi process in a tmux pane. */
export class TmuxKimi {
  readonly socket: string;
  readonly #sb: KimiSandbox;

  private constructor(sb: KimiSandbox, socket: string) {
    this.#sb = sb;
    this.socket = socket;
  }

  /** Start `main.ts args` in a fresh tmux server (pane `width`x`height`). */
  static async start(
    sb: KimiSandbox,
    args: string[],
    opts: {
      width?: number;
      height?: number;
      env?: Record<string, string>;
      /** Deno permission flags (default `-A`). */
      permissions?: string[];
      /** Extra Deno flags after `-A` (e.g. `--deny-net=host`). */
      denoFlags?: string[];
      /** The entry point (default the checkout's `main.ts`). */
      main?: string;
    } = {},
  ): Promise<TmuxKimi> {
    const socket = `kimi-e2e-${crypto.randomUUID().slice(0, 8)}`;
    const env: Record<string, string> = {
      HOME: sb.home,
      KIMI_SHARE_DIR: sb.shareDir,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      TERM: "xterm-256color",
      NO_COLOR: "1",
      LANG: "C.UTF-8",
      ...opts.env,
    };
    const cmd = [
      "env",
      "-i",
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      Deno.execPath(),
      "run",
      "--no-prompt",
      ...(opts.permissions ?? ["-A"]),
      ...(opts.denoFlags ?? []),
      opts.main ?? MAIN_TS,
      ...args,
    ].map(shellQuote).join(" ");
    const t = new TmuxKimi(sb, socket);
    await t.tmux([
      "new-session",
      "-d",
      "-x",
      String(opts.width ?? 120),
      "-y",
      String(opts.height ?? 40),
      "-c",
      sb.workDir,
      // keep the pane after exit so the final screen can be read
      `${cmd}; echo "[exit $?]"; sleep 600`,
    ]);
    return t;
  }

  /** Run a tmux command on this server. */
  async tmux(args: string[]): Promise<string> {
    const out = await new Deno.Command("tmux", {
      args: ["-L", this.socket, "-f", "/dev/null", ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`tmux ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    return new TextDecoder().decode(out.stdout);
  }

  /** Send keys (tmux key names such as `Enter`, `C-c`, `Up`, or literal text with `literal`). */
  async keys(...keys: string[]): Promise<void> {
    await this.tmux(["send-keys", "-t", "0", ...keys]);
  }

  /** Type literal text. */
  async type(text: string): Promise<void> {
    await this.tmux(["send-keys", "-t", "0", "-l", "--", text]);
  }

  /** The visible screen (trailing blank lines removed). */
  async screen(): Promise<string> {
    const text = await this.tmux(["capture-pane", "-p", "-t", "0"]);
    return text.replace(/\s+$/, "");
  }

  /** The whole pane: scrollback history and the visible screen (trailing blank lines removed). */
  async history(): Promise<string> {
    const text = await this.tmux(["capture-pane", "-p", "-t", "0", "-S", "-", "-E", "-"]);
    return text.replace(/\s+$/, "");
  }

  /**
   * Append every byte the program writes from now on (control sequences included: bells, OSC
   * strings tmux does not draw) to `path`.
   */
  async recordOutput(path: string): Promise<void> {
    await this.tmux(["pipe-pane", "-O", "-t", "0", `cat >> ${shellQuote(path)}`]);
  }

  /** Send raw bytes to the program, as the terminal would (e.g. a focus report). */
  async sendBytes(bytes: number[]): Promise<void> {
    await this.tmux(["send-keys", "-t", "0", "-H", ...bytes.map((b) => b.toString(16))]);
  }

  /** Resize the pane's window (the program gets SIGWINCH). */
  async resize(width: number, height: number): Promise<void> {
    await this.tmux(["resize-window", "-t", "0", "-x", String(width), "-y", String(height)]);
  }

  /** Poll the screen until `pred` holds; throws with the screen after `timeoutMs`. */
  async waitFor(
    pred: string | RegExp | ((screen: string) => boolean),
    timeoutMs = 60000,
  ): Promise<string> {
    const test = typeof pred === "string"
      ? (s: string) => s.includes(pred)
      : pred instanceof RegExp
      ? (s: string) => pred.test(s)
      : pred;
    const deadline = Date.now() + timeoutMs;
    let screen = "";
    while (Date.now() < deadline) {
      screen = await this.screen();
      if (test(screen)) return screen;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${String(pred)}; screen:\n${screen}`);
  }

  /** Kill the tmux server (and the kimi process in it). */
  async close(): Promise<void> {
    await this.tmux(["kill-server"]).catch(() => {});
  }

  /** The sandbox. */
  get sandbox(): KimiSandbox {
    return this.#sb;
  }
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_\/.=:,@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
