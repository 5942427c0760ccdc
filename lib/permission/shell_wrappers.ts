/**
 * What commands run other commands, so that deny and ask rules cannot be sidestepped by a
 * wrapper: `sudo rm x`, `env A=1 rm x`, `timeout 5 rm x`, `nice -n 5 rm x`, `time rm x` run
 * `rm`; `xargs rm` and `find -exec rm {} +` run `rm` with arguments only known when the line
 * runs; `find -delete` removes files as `rm` would; `bash -c "rm x"`, `eval "rm x"`,
 * `env -S "rm x"` and a git alias `-c alias.x='!rm x'` run the code in their argument; a
 * shell that reads its code from a file or its standard input (`bash script.sh`, `… | sh`,
 * `bash <<< "…"`, `. /dev/stdin`) runs code nothing here can see.
 *
 * Allow rules still have to match the whole command (`sudo rm x` is not `rm x`).
 *
 * @module
 */

/** One word of a command: its value (quotes removed) and whether it is only known at run time. */
export interface ShellWord {
  /** The value with quotes removed, or the source text when dynamic. */
  value: string;
  /** Whether the value depends on an expansion. */
  dynamic: boolean;
}

/** What a wrapper command runs. */
export type Unwrapped =
  | {
    kind: "command";
    /** The words of the command it runs. */
    words: ShellWord[];
    /** Whether arguments only known at run time are appended (`xargs`, `find -exec … +`). */
    dynamicTail: boolean;
  }
  | { kind: "code"; text: string; dynamic: boolean }
  | { kind: "opaque"; reason: string };

/** Shells: `-c` takes code; without it they run a script file or their standard input. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "rbash",
  "zsh",
  "dash",
  "ash",
  "ksh",
  "mksh",
  "pdksh",
  "yash",
  "posh",
  "fish",
  "csh",
  "tcsh",
]);

/** Wrappers and their options that take a separate value (`-u root`). */
const WRAPPER_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  sudo: [
    "-u",
    "-g",
    "-C",
    "-D",
    "-h",
    "-p",
    "-r",
    "-t",
    "-T",
    "-U",
    "-R",
    "--user",
    "--group",
    "--chdir",
    "--chroot",
    "--prompt",
    "--role",
    "--type",
    "--other-user",
    "--host",
    "--close-from",
    "--command-timeout",
  ],
  doas: ["-u", "-C"],
  pkexec: ["--user"],
  runuser: ["-u", "-g", "-G", "--user", "--group", "--supp-group"],
  nice: ["-n", "--adjustment"],
  ionice: ["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
  timeout: ["-s", "-k", "--signal", "--kill-after"],
  stdbuf: ["-i", "-o", "-e", "--input", "--output", "--error"],
  nohup: [],
  time: ["-f", "-o", "--format", "--output"],
  command: [],
  builtin: [],
  exec: ["-a"],
  coproc: [],
  chroot: ["--userspec", "--groups"],
  setsid: [],
  unbuffer: [],
  caffeinate: [],
  fakeroot: ["-l", "-s", "-i", "--lib", "--faked"],
  busybox: [],
  taskset: [],
  chrt: [],
  prlimit: ["-p", "--pid"],
  flock: ["-w", "-E", "--timeout", "--conflict-exit-code"],
  unshare: ["-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd"],
  strace: ["-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X"],
  ltrace: ["-e", "-o", "-p", "-s", "-u", "-a", "-n", "-l"],
  nsenter: ["-t", "--target", "-S", "-G"],
  "xvfb-run": ["-n", "-s", "-f", "-e", "-p", "--server-args", "--server-num"],
  "dbus-run-session": ["--config-file", "--dbus-daemon"],
  "systemd-run": ["-p", "-u", "-E", "--unit", "--property", "--setenv", "--uid", "--gid"],
  catchsegv: [],
  valgrind: [],
  firejail: [],
  torsocks: [],
  proxychains: ["-f"],
  proxychains4: ["-f"],
  faketime: ["-f"],
  rlwrap: ["-a", "-f", "-H", "-l", "-p", "-P", "-S"],
  watch: ["-n", "-d", "--interval", "--differences"],
};

/** Options of `xargs` that take a separate value. */
const XARGS_OPTIONS = ["-I", "-n", "-P", "-L", "-d", "-E", "-e", "-s", "-a", "--arg-file"];

/** `find` actions that run a command up to `;` or `+`. */
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** Git configuration keys whose value is a command git runs (or that changes what it runs). */
const GIT_CODE_KEYS =
  /^(alias\.|core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|attributesfile|excludesfile)$|diff\.|difftool\.|merge\.|mergetool\.|filter\.|credential|sequence\.editor|gpg\.|pager\.|uploadpack\.|receivepack\.|protocol\.|url\.|include|interactive\.|ssh\.|remote\.|submodule\.|http\.|init\.templatedir|web\.browser|man\.|browser\.|instaweb\.|sendemail\.|blame\.ignorerevsfile)/i;

const stat = (value: string): ShellWord => ({ value, dynamic: false });

/** The file name of a program path (`/usr/bin/rm` → `rm`). */
export function programName(word: string): string {
  const slash = word.lastIndexOf("/");
  return slash >= 0 ? word.slice(slash + 1) : word;
}

/** The code after a shell's options, or why the code cannot be seen. */
function unwrapShell(args: readonly ShellWord[]): Unwrapped[] {
  let i = 0;
  let code = false;
  while (i < args.length) {
    const a = args[i].value;
    if (args[i].dynamic) {
      return [{ kind: "opaque", reason: "a shell with options only known when it runs" }];
    }
    if (a === "--" || a === "-") {
      i++;
      break;
    }
    if (!/^[-+]./.test(a)) break;
    if (a.startsWith("--")) {
      i += ["--rcfile", "--init-file"].includes(a) ? 2 : 1;
      continue;
    }
    if (a.startsWith("-") && a.includes("c")) code = true;
    i += /[oO]/.test(a.slice(1)) ? 2 : 1;
  }
  if (code) {
    const word = args[i];
    if (word === undefined) return [];
    return [{ kind: "code", text: word.value, dynamic: word.dynamic }];
  }
  if (args.length > 0 && args.every((a) => ["--version", "--help", "-version"].includes(a.value))) {
    return [];
  }
  const operand = args[i];
  return [{
    kind: "opaque",
    reason: operand
      ? `the shell runs the script \`${operand.value}\`, whose code is not part of the line`
      : "the shell runs code from its standard input, which is not part of the line",
  }];
}

/** `env [options] [NAME=VALUE...] [command...]`. */
function unwrapEnv(args: readonly ShellWord[]): Unwrapped[] {
  let i = 0;
  while (i < args.length) {
    const w = args[i];
    const a = w.value;
    if (w.dynamic) return [{ kind: "opaque", reason: "`env` with words only known when it runs" }];
    if (a === "--") {
      i++;
      break;
    }
    const split = /^(?:-S|--split-string=?)(.*)$/s.exec(a);
    if (split) {
      const s = split[1] !== "" || a.endsWith("=") ? split[1] : args[i + 1]?.value ?? "";
      const sDynamic = split[1] === "" && !a.endsWith("=") && (args[i + 1]?.dynamic ?? false);
      const rest = args.slice(split[1] !== "" || a.endsWith("=") ? i + 1 : i + 2);
      return [{
        kind: "code",
        text: [s, ...rest.map((r) => r.dynamic ? r.value : quoteWord(r.value))].join(" "),
        dynamic: sDynamic || rest.some((r) => r.dynamic),
      }];
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) {
      i++;
      continue;
    }
    if (!a.startsWith("-") || a === "-") break;
    i += ["-u", "-C", "--unset", "--chdir"].includes(a) ? 2 : 1;
  }
  const rest = args.slice(i);
  return rest.length ? [{ kind: "command", words: rest, dynamicTail: false }] : [];
}

/** `xargs [options] [command [initial-arguments]]` (default command `echo`). */
function unwrapXargs(args: readonly ShellWord[]): Unwrapped[] {
  let i = 0;
  let replace: string | null = null;
  while (i < args.length) {
    const a = args[i].value;
    if (args[i].dynamic) {
      return [{ kind: "opaque", reason: "`xargs` with options only known when it runs" }];
    }
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    if (a === "-I") replace = args[i + 1]?.value ?? null;
    else if (/^-I./.test(a)) replace = a.slice(2);
    else if (a === "-i" || a === "--replace") replace = "{}";
    else if (/^(-i|--replace=)./.test(a)) replace = a.replace(/^(-i|--replace=)/, "");
    i += XARGS_OPTIONS.includes(a) ? 2 : 1;
  }
  const rest: ShellWord[] = args.slice(i).map((w) =>
    replace !== null && w.value.includes(replace) ? { value: w.value, dynamic: true } : w
  );
  return [{
    kind: "command",
    words: rest.length ? rest : [stat("echo")],
    dynamicTail: replace === null,
  }];
}

/** The commands `find` runs (`-exec … ;`/`+`) and the removal `-delete` does. */
function unwrapFind(args: readonly ShellWord[]): Unwrapped[] {
  const out: Unwrapped[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i].value;
    if (args[i].dynamic) {
      // A word only known when the line runs may be any action, `-exec` or `-delete` included.
      out.push({ kind: "opaque", reason: "`find` with words only known when it runs" });
      continue;
    }
    if (a === "-delete") {
      out.push({
        kind: "command",
        words: [stat("rm"), { value: "{}", dynamic: true }],
        dynamicTail: false,
      });
      continue;
    }
    if (!FIND_EXEC.has(a)) continue;
    let end = i + 1;
    while (end < args.length && args[end].value !== ";" && args[end].value !== "+") end++;
    const words = args.slice(i + 1, end).map((w) =>
      w.value.includes("{}") ? { value: w.value, dynamic: true } : w
    );
    if (words.length) {
      out.push({ kind: "command", words, dynamicTail: args[end]?.value === "+" });
    }
    i = end;
  }
  return out;
}

/** The code `git -c alias.x='!…'` runs, or why git's configuration makes it opaque. */
function unwrapGit(args: readonly ShellWord[]): Unwrapped[] {
  const out: Unwrapped[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i].value;
    let kv: ShellWord | null = null;
    if (a === "-c") kv = args[++i] ?? null;
    else if (/^-c./.test(a)) kv = { value: a.slice(2), dynamic: args[i].dynamic };
    else if (
      a === "--config-env" || a.startsWith("--config-env=") || a === "--exec-path" ||
      a.startsWith("--exec-path=")
    ) {
      out.push({ kind: "opaque", reason: `\`git ${a}\` changes what git runs` });
      continue;
    } else if (!a.startsWith("-")) break; // the subcommand: its own options follow
    else if (a === "-C" || a === "--git-dir" || a === "--work-tree" || a === "--namespace") i++;
    if (kv === null) continue;
    if (kv.dynamic) {
      out.push({ kind: "opaque", reason: "a git configuration only known when it runs" });
      continue;
    }
    const eq = kv.value.indexOf("=");
    const key = eq >= 0 ? kv.value.slice(0, eq) : kv.value;
    const value = eq >= 0 ? kv.value.slice(eq + 1) : "";
    if (/^alias\./i.test(key) && value.startsWith("!")) {
      out.push({ kind: "code", text: value.slice(1), dynamic: false });
    } else if (GIT_CODE_KEYS.test(key)) {
      out.push({ kind: "opaque", reason: `the git setting \`${key}\` may run other commands` });
    }
  }
  return out;
}

/** `su [options] [-c code] [user]`, `runuser -c`, `script -qc`, `flock … -c`. */
function codeOption(args: readonly ShellWord[]): Unwrapped[] | null {
  const c = args.findIndex((a) => /^-[a-zA-Z]*c$/.test(a.value) || a.value === "--command");
  if (c >= 0 && args[c + 1]) {
    return [{ kind: "code", text: args[c + 1].value, dynamic: args[c + 1].dynamic }];
  }
  const glued = args.find((a) => a.value.startsWith("--command="));
  if (glued) {
    return [{ kind: "code", text: glued.value.slice(10), dynamic: glued.dynamic }];
  }
  return null;
}

/** Options of `ssh` that take a separate value. */
const SSH_OPTIONS = /^-[BbcDEeFIiJLlmOoPpQRSWw]$/;

/** `ssh [options] host [command...]`: the command is shell code run on the host. */
function unwrapSsh(args: readonly ShellWord[]): Unwrapped[] {
  let i = 0;
  while (i < args.length && args[i].value.startsWith("-")) {
    i += SSH_OPTIONS.test(args[i].value) ? 2 : 1;
  }
  const rest = args.slice(i + 1);
  if (rest.length === 0) return [];
  return [{
    kind: "code",
    text: rest.map((r) => r.value).join(" "),
    dynamic: rest.some((r) => r.dynamic),
  }];
}

/** `parallel [options] command ::: args`: the command with arguments known when it runs. */
function unwrapParallel(args: readonly ShellWord[]): Unwrapped[] {
  let i = 0;
  while (i < args.length && args[i].value.startsWith("-")) i++;
  const end = args.findIndex((a, j) => j >= i && /^:::+$/.test(a.value));
  const words = args.slice(i, end < 0 ? undefined : end);
  if (words.length === 0) {
    return [{ kind: "opaque", reason: "`parallel` runs commands from its input" }];
  }
  return [{
    kind: "code",
    text: words.map((w) => w.value).join(" "),
    dynamic: true,
  }];
}

/** A sed `e` command, with an optional address (`1e cmd`, `/x/,$e`, `$!e`). */
const SED_EXECUTE = new RegExp(
  String.raw`(^|[;\n{}])\s*(\d+|\$|/(?:[^/\\]|\\.)*/)?(\s*,\s*(\d+|\$|/(?:[^/\\]|\\.)*/))?` +
    String.raw`\s*!?\s*e(\s|;|}|$)`,
);

/** The program text of `awk`/`sed` and whether it can run commands (`system()`, `e`). */
function scriptRunsCommands(program: string, args: readonly ShellWord[]): string | null {
  const scripts: ShellWord[] = [];
  let file = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i].value;
    if (a === "-f" || a.startsWith("--file") || /^-[a-zA-Z]*f$/.test(a) && program === "sed") {
      file = true;
      i++;
    } else if (a === "-e" || a === "--expression") scripts.push(args[++i] ?? stat(""));
    else if (a.startsWith("--expression=")) scripts.push(stat(a.slice(13)));
    else if (program !== "sed" && /^-[vF]$/.test(a)) i++;
    else if (!a.startsWith("-") && scripts.length === 0) {
      scripts.push(args[i]);
      if (program !== "sed") break;
    }
  }
  if (file) return `\`${program}\` runs a program file, which is not part of the line`;
  for (const s of scripts) {
    if (s.dynamic) return `\`${program}\` runs a program only known when the line runs`;
    const text = s.value;
    const runs = program === "sed"
      ? SED_EXECUTE.test(text) || /\bs(.).*\1.*\1[gpiImM0-9w]*e/.test(text)
      : /\bsystem\s*\(|\|\s*&?\s*("|[A-Za-z_])|"\s*\|/.test(text);
    if (runs) return `the \`${program}\` program runs shell commands`;
  }
  return null;
}

/** Interpreters and the options whose value is a program given on the command line. */
const INTERPRETERS: readonly { name: RegExp; code: RegExp; valueOptions: RegExp }[] = [
  { name: /^(python|pypy)[\d.]*$/, code: /^-[A-Za-z]*c$/, valueOptions: /^-[WXQ]$/ },
  { name: /^perl[\d.]*$/, code: /^-[A-Za-z]*[eE]$/, valueOptions: /^-[IMmx]$/ },
  { name: /^ruby[\d.]*$/, code: /^-[A-Za-z]*e$/, valueOptions: /^-[IrCx]$/ },
  {
    name: /^(node|nodejs|bun)$/,
    code: /^(-e|--eval|-p|--print)$/,
    valueOptions: /^(-r|--require|--import|--loader)$/,
  },
  { name: /^php[\d.]*$/, code: /^-r$/, valueOptions: /^-[cdz]$/ },
  { name: /^lua(jit)?[\d.]*$/, code: /^-e$/, valueOptions: /^-l$/ },
  { name: /^Rscript$/, code: /^-e$/, valueOptions: /^$/ },
  { name: /^osascript$/, code: /^-e$/, valueOptions: /^-[ls]$/ },
];

/**
 * Calls that start another program (or evaluate code that may): in a program given on the
 * command line they make what the line runs unknown.
 */
const SPAWNING_CODE =
  /\b(system|exec[a-z]*|popen|spawn[a-z]*|subprocess|Popen|check_output|fork[a-z]*|__import__|importlib|getattr|eval|compile|globals|child_process|require|import\s*\(|Function|Deno|Bun|process\.binding|shell_exec|passthru|proc_open|qx|IO\.popen|Open3|Kernel|instance_eval|loadstring|dofile|do\s+shell\s+script)\b|`|%x|\$\(/;

/** Why an interpreter's run cannot be told from the line, or null (a script file, no code). */
function interpreterOpaque(program: string, args: readonly ShellWord[]): Unwrapped[] | null {
  const spec = INTERPRETERS.find((i) => i.name.test(program));
  if (!spec) return null;
  let sawOperand = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.dynamic) {
      return [{ kind: "opaque", reason: `\`${program}\` gets arguments only known when it runs` }];
    }
    if (spec.code.test(a.value) || (program === "deno" && a.value === "eval")) {
      const code = args[i + 1];
      if (code === undefined) return null;
      if (code.dynamic || SPAWNING_CODE.test(code.value)) {
        return [{
          kind: "opaque",
          reason: `the \`${program}\` program given on the line may start other programs`,
        }];
      }
      i++;
      continue;
    }
    if (a.value === "--") break;
    if (spec.valueOptions.test(a.value)) {
      i++;
      continue;
    }
    if (a.value === "-") break;
    if (!a.value.startsWith("-")) {
      sawOperand = true;
      break;
    }
    if (/^(--version|-V|--help|-h)$/.test(a.value)) return null;
    if (program.startsWith("python") && a.value === "-m") return null;
  }
  if (sawOperand || args.some((a) => spec.code.test(a.value))) return null;
  return [{
    kind: "opaque",
    reason:
      `\`${program}\` reads its program from its standard input, which is not part of the line`,
  }];
}

/**
 * The commands and code a wrapper command runs, or `[]` when `words` is not a wrapper (or runs
 * nothing else, like `command -v rm`).
 */
export function unwrapCommand(words: readonly ShellWord[]): Unwrapped[] {
  const [first, ...args] = words;
  if (first === undefined || first.dynamic) return [];
  const program = programName(first.value);
  if (program === "eval") {
    return args.length
      ? [{
        kind: "code",
        text: args.map((a) => a.value).join(" "),
        dynamic: args.some((a) => a.dynamic),
      }]
      : [];
  }
  if (program === "." || program === "source") {
    return args.length
      ? [{
        kind: "opaque",
        reason: `\`${program}\` runs the code of \`${
          args[0].value
        }\`, which is not part of the line`,
      }]
      : [];
  }
  if ((program === "mapfile" || program === "readarray")) {
    // `-C callback` is code run every `-c` lines.
    const c = args.findIndex((a) => a.value === "-C" || /^-C./.test(a.value));
    if (c >= 0) {
      const code = args[c].value === "-C" ? args[c + 1] : stat(args[c].value.slice(2));
      if (code) return [{ kind: "code", text: code.value, dynamic: code.dynamic }];
    }
    return [];
  }
  if (program === "trap") {
    const code = args.find((a) => !a.value.startsWith("-"));
    return code ? [{ kind: "code", text: code.value, dynamic: code.dynamic }] : [];
  }
  if (program === "alias" && args.some((a) => a.value.includes("=") || a.dynamic)) {
    return [{ kind: "opaque", reason: "an alias replaces what a command name runs" }];
  }
  if (program === "hash" && args.some((a) => a.value === "-p" || a.dynamic)) {
    return [{ kind: "opaque", reason: "`hash -p` replaces what a command name runs" }];
  }
  if (program === "enable" && args.some((a) => /^-.*f/.test(a.value) || a.dynamic)) {
    return [{ kind: "opaque", reason: "`enable -f` loads a builtin from a file" }];
  }
  if (SHELLS.has(program)) return unwrapShell(args);
  const interpreted = interpreterOpaque(program, args);
  if (interpreted) return interpreted;
  if (program === "deno" && args[0]?.value === "eval") {
    const code = args.find((a, i) => i > 0 && !a.value.startsWith("-"));
    if (code && (code.dynamic || SPAWNING_CODE.test(code.value))) {
      return [{ kind: "opaque", reason: "the `deno eval` program may start other programs" }];
    }
  }
  if (program === "ssh") return unwrapSsh(args);
  if (program === "parallel") return unwrapParallel(args);
  if (["awk", "gawk", "mawk", "nawk", "sed", "gsed"].includes(program)) {
    const reason = scriptRunsCommands(program === "gsed" ? "sed" : program, args);
    return reason ? [{ kind: "opaque", reason }] : [];
  }
  if (program === "env") return unwrapEnv(args);
  if (program === "xargs") return unwrapXargs(args);
  if (program === "find") return unwrapFind(args);
  if (program === "git") return unwrapGit(args);
  if (["su", "runuser", "script", "flock", "sg"].includes(program)) {
    const code = codeOption(args);
    if (code) return code;
    if (program === "su" || program === "script" || program === "sg") return [];
  }
  if (program === "watch") {
    // watch runs its arguments through `sh -c`.
    const rest = skipOptions(args, WRAPPER_OPTIONS.watch);
    return rest.length
      ? [{
        kind: "code",
        text: rest.map((r) => r.value).join(" "),
        dynamic: rest.some((r) => r.dynamic),
      }]
      : [];
  }
  if (program === "command" && args.some((a) => /^-[a-zA-Z]*[vV]/.test(a.value))) return [];
  const withValue = WRAPPER_OPTIONS[program];
  if (withValue === undefined) return [];
  let rest = skipOptions(args, withValue);
  // Wrappers with one positional argument before the command.
  if (["timeout", "chroot", "taskset", "chrt", "flock"].includes(program) && rest.length) {
    rest = rest.slice(1);
  }
  if (program === "nice" && /^-\d+$/.test(rest[0]?.value ?? "")) rest = rest.slice(1);
  return rest.length ? [{ kind: "command", words: rest, dynamicTail: false }] : [];
}

function skipOptions(args: readonly ShellWord[], withValue: readonly string[]): ShellWord[] {
  let i = 0;
  while (i < args.length) {
    const a = args[i].value;
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    i += withValue.includes(a) ? 2 : 1;
  }
  return args.slice(i);
}

/** Characters a word may hold and still be written without quotes. */
const BARE = /^[A-Za-z0-9_@%+=:,.\/~^-]+$/;

/** A word as the shell would read it back: bare when safe, else single-quoted. */
export function quoteWord(value: string): string {
  // A leading `~` is a home dir only when unquoted: a literal one stays quoted.
  if (value !== "" && BARE.test(value) && !value.startsWith("~")) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
