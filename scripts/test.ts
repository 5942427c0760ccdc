/**
 * Runs the whole test suite (`deno test` over `tests/`) and ends with the line
 * `N passed, N failed` that CI reads. Extra arguments are passed to `deno test`.
 *
 * First it fills the Deno cache with everything the tests load or spawn, so the suite passes on
 * a fresh machine (empty `DENO_DIR`): every module of the program and the tests (`deno cache`
 * follows literal dynamic `import()`s, which a run loads only when they are called), what
 * `deno install -g` of the checkout resolves, `deno bundle`'s esbuild, and the npm packages tests
 * start as child processes (MCP servers). Without this a first download inside a test outlasts
 * its timeouts.
 *
 * @module
 */
import { SPAWNED_NPM_PACKAGES } from "../tests/helpers/npm_servers.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** Every `.ts`/`.tsx` file under `dirs` (relative to the repo root), sorted. */
async function tsFiles(dirs: string[]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(`${ROOT}${dir}`)) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(rel);
      else if (e.isFile && /\.tsx?$/.test(e.name)) out.push(rel);
    }
  };
  for (const dir of dirs) await walk(dir);
  return out.sort();
}

/** Run `deno <args>` in the repo root; throws with its output when it fails. */
async function deno(args: string[], what: string): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    throw new Error(`Could not ${what} (deno ${args.slice(0, 3).join(" ")} ...):\n${text}`);
  }
}

const started = Date.now();
await deno(
  ["cache", "--quiet", "main.ts", "mod.ts", ...(await tsFiles(["lib", "tools", "tests"]))],
  "cache the program and the tests",
);
await deno(
  ["cache", "--quiet", "--no-config", "--no-lock", ...SPAWNED_NPM_PACKAGES],
  "cache the npm packages the tests spawn",
);
// Every npm package of deno.json, as kimi's own first run fetches them (lib/dependency_cache.ts):
// a child kimi then never stops to print "preparing kimi, first run …".
await deno(["install", "--quiet"], "install the npm packages of deno.json");
// The npm packages' registry metadata too (a run of the source from a URL has no lock file and
// resolves every package through it).
await deno(
  ["cache", "--quiet", "--config", `${ROOT}deno.json`, "--no-lock", "main.ts"],
  "cache the registry metadata of the program's npm packages",
);
const scratch = await Deno.makeTempDir({ prefix: "kimi-precache-" });
try {
  // What `deno install -g` of the checkout resolves (the install and URL-run tests install and
  // serve packages from this cache without reaching the registry).
  await deno(
    [
      "install",
      "--quiet",
      "-g",
      "-f",
      "--root",
      scratch,
      "-n",
      "kimi-precache",
      "--config",
      `${ROOT}deno.json`,
      "-A",
      `${ROOT}main.ts`,
    ],
    "cache what an install of kimi resolves",
  );
  // `deno bundle` fetches esbuild on first use; tests that bundle in parallel would race to.
  await Deno.writeTextFile(`${scratch}/empty.ts`, "export {};\n");
  await deno(
    ["bundle", "--quiet", "--output", `${scratch}/empty.js`, `${scratch}/empty.ts`],
    "set up deno bundle",
  );
} finally {
  await Deno.remove(scratch, { recursive: true }).catch(() => {});
}
console.log(`Deno cache ready (${((Date.now() - started) / 1000).toFixed(1)} s)`);

const junit = await Deno.makeTempFile({ suffix: ".xml" });
const args = [
  "test",
  "--no-prompt",
  "-A",
  "--parallel",
  `--junit-path=${junit}`,
  ...(Deno.args.length ? Deno.args : ["tests/"]),
];
const child = new Deno.Command(Deno.execPath(), {
  args,
  stdin: "null",
  stdout: "inherit",
  stderr: "inherit",
  env: { DENO_JOBS: Deno.env.get("DENO_JOBS") ?? "2" },
}).spawn();
const status = await child.status;

/** The text of an XML attribute value. */
function unescapeXml(text: string): string {
  return text.replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

let passed = 0;
let failed = 0;
try {
  const xml = await Deno.readTextFile(junit);
  // Count top-level tests (testcase elements), failures by their <failure> children.
  const timed: { name: string; seconds: number }[] = [];
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const body = m[3] ?? "";
    if (/<failure\b/.test(body) || /<error\b/.test(body)) failed++;
    else if (!/<skipped\b/.test(body)) passed++;
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(m[1])?.[1] ?? "";
    timed.push({ name: `${attr("classname")} => ${attr("name")}`, seconds: Number(attr("time")) });
  }
  console.log("\nSlowest tests:");
  for (const t of timed.sort((a, b) => b.seconds - a.seconds).slice(0, 10)) {
    console.log(`  ${t.seconds.toFixed(1).padStart(6)} s  ${unescapeXml(t.name)}`);
  }
} catch {
  // no report: the run itself failed before tests started
}
await Deno.remove(junit).catch(() => {});
if (!status.success && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(status.code);
