/**
 * The commands hidden inside wrapper commands, so that deny and ask rules cannot be sidestepped:
 * `sudo rm x`, `env A=1 rm x`, `timeout 5 rm x`, `nice -n 5 rm x`, `xargs rm`, `time rm x`
 * run `rm`, and `bash -c "rm x"` / `eval "rm x"` run the code in their argument.
 *
 * Allow rules still have to match the whole command (`sudo rm x` is not `rm x`).
 *
 * @module
 */
/** Wrappers and their options that take a value (`-u root`). */
const WRAPPER_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  sudo: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group"],
  doas: ["-u", "-C"],
  env: ["-u", "-C", "-S", "--unset", "--chdir"],
  nice: ["-n", "--adjustment"],
  ionice: ["-c", "-n", "-p"],
  timeout: ["-s", "-k", "--signal", "--kill-after"],
  xargs: ["-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--max-args", "--max-procs"],
  stdbuf: ["-i", "-o", "-e"],
  nohup: [],
  time: ["-f", "-o"],
  command: [],
  builtin: [],
  exec: ["-a"],
  coproc: [],
  chroot: [],
  setsid: [],
  unbuffer: [],
  caffeinate: [],
  watch: ["-n", "-d", "--interval"],
};

/** Shells whose `-c` argument is code. */
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish"]);

/** What a wrapper command runs. */
export type Unwrapped =
  | { kind: "command"; words: string[] }
  | { kind: "code"; text: string }
  | null;

/** The command or code a wrapper runs, or null when `words` is not a wrapper. */
export function unwrapCommand(words: readonly string[]): Unwrapped {
  const [program, ...args] = words;
  if (program === undefined) return null;
  if (program === "eval") return args.length ? { kind: "code", text: args.join(" ") } : null;
  if (SHELLS.has(program)) {
    const c = args.findIndex((a) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a));
    return c >= 0 && args[c + 1] !== undefined ? { kind: "code", text: args[c + 1] } : null;
  }
  const withValue = WRAPPER_OPTIONS[program];
  if (withValue === undefined) return null;
  let i = 0;
  while (i < args.length) {
    const a = args[i];
    if (a === "--") {
      i++;
      break;
    }
    if (program === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) {
      i++;
      continue;
    }
    if (!a.startsWith("-") || a === "-") break;
    i += withValue.includes(a) ? 2 : 1;
  }
  if (program === "timeout" && i < args.length) i++; // the duration
  if (program === "chroot" && i < args.length) i++; // the new root
  const rest = args.slice(i);
  return rest.length ? { kind: "command", words: rest } : null;
}
