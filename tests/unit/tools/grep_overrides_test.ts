/**
 * The TS Grep engine's `--glob` overrides: a plain-name glob is decided by comparing the entry's
 * name (no picomatch per entry); the verdicts must be exactly picomatch's on the whole path.
 */
import picomatchUntyped from "picomatch";
import { assertEquals } from "../../helpers/assert.ts";
import { Overrides, type Verdict } from "../../../lib/search/ignore_rules.ts";

const picomatch = picomatchUntyped as (
  glob: string,
  opts?: { dot?: boolean },
) => (path: string) => boolean;

/** The verdict of one glob computed the slow way: picomatch on the path relative to the root. */
function reference(glob: string, rel: string, isDir: boolean): Verdict {
  const negated = glob.startsWith("!");
  let line = negated ? glob.slice(1) : glob;
  let anchored = false;
  if (line.startsWith("/")) {
    anchored = true;
    line = line.slice(1);
  }
  if (!anchored && !line.includes("/") && !line.startsWith("**/")) line = `**/${line}`;
  if (picomatch(line, { dot: true })(rel)) return negated ? "ignore" : "whitelist";
  return !negated && !isDir ? "ignore" : null;
}

Deno.test("Grep overrides: plain-name globs give picomatch's verdicts", () => {
  const globs = [
    ".git",
    "!.git",
    "real.py",
    "!real.py",
    "file-2-x.txt",
    "**/real.py",
    "/real.py",
    "REAL.PY",
    "sub",
    "!sub",
    "a.b.c",
    "!node_modules",
  ];
  const entries: [string, string, boolean][] = [
    ["", ".git", true],
    ["", ".git", false],
    ["src", ".git", true],
    ["src/deep/er", ".git", true],
    ["", ".github", true],
    ["x", "my.git", true],
    ["", "real.py", false],
    ["src/sub", "real.py", false],
    ["src/sub", "real.pyc", false],
    ["src/sub", "xreal.py", false],
    ["real.py", "other.py", false],
    ["src", "REAL.PY", false],
    ["src", "real.py", true],
    ["weird-1-name", "file-2-x.txt", false],
    ["", "sub", true],
    ["src", "sub", true],
    ["src/sub", "file.txt", false],
    ["", "a.b.c", false],
    ["", "aXbXc", false],
    ["tmp/outside/the/cwd", "node_modules", true],
  ];
  for (const glob of globs) {
    const overrides = new Overrides([glob]);
    for (const [relDir, name, isDir] of entries) {
      const rel = relDir === "" ? name : `${relDir}/${name}`;
      assertEquals(
        overrides.matched(relDir, name, isDir),
        reference(glob, rel, isDir),
        `glob ${glob} on ${rel}${isDir ? "/" : ""}`,
      );
    }
  }
});

Deno.test("Grep overrides: the last matching glob wins, plain names and patterns mixed", () => {
  const overrides = new Overrides(["!.git", "!.hg", "*.py", "!real.py"]);
  assertEquals(overrides.matched("src", "real.py", false), "ignore");
  assertEquals(overrides.matched("src", "main.py", false), "whitelist");
  assertEquals(overrides.matched("src", "notes.txt", false), "ignore");
  assertEquals(overrides.matched("src", "sub", true), null);
  assertEquals(overrides.matched("src", ".git", true), "ignore");
  const reverse = new Overrides(["!real.py", "*.py"]);
  assertEquals(reverse.matched("src", "real.py", false), "whitelist");
});
