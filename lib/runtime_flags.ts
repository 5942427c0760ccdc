/**
 * The V8 settings every kimi process is started with, in one place: the launchers, the
 * compiled binaries, the background task worker, the wire client and the commands in the README
 * all pass {@link DENO_V8_FLAGS_ARG} (a test checks the README, `deno.json` and the shebang of
 * `main.ts`).
 *
 * `--max-semi-space-size=2` caps each half of V8's young generation at 2 MB. V8's default lets
 * it grow to 16 MB per half as soon as a few scavenges see survivors, and that committed memory
 * stays resident for the life of the process. kimi allocates in short bursts (a streamed reply,
 * a tool result) and keeps little of it, so the small young generation costs no time: measured
 * against the default in one run, the peak RSS of a 10-step tool loop went from 97.6 MB to
 * 88.2 MB with the same step time, and a 9.5 MB wire turn from 292 MB to 269 MB with the same
 * wall time. A kimi started without the flag works the same and only uses more memory.
 *
 * `--min-semi-space-size=2` starts the young generation at that cap instead of growing it there
 * from 1 MB: while a process starts nearly everything it allocates survives (modules, schemas,
 * the config), and each early scavenge of the smaller space copies it. `kimi --help` then runs
 * with no garbage collection at all (two scavenges before, about 5% of its wall time, measured
 * pair by pair); an agent run keeps the same peak RSS, since its young generation reaches the
 * cap within its first steps anyway.
 *
 * @module
 */

/** The V8 flags kimi runs with. */
export const V8_FLAGS: readonly string[] = ["--max-semi-space-size=2", "--min-semi-space-size=2"];

/** The `deno run`/`deno install`/`deno compile` flag that passes {@link V8_FLAGS}. */
export const DENO_V8_FLAGS_ARG: string = `--v8-flags=${V8_FLAGS.join(",")}`;
