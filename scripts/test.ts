/**
 * Runs the whole test suite (`deno test` over `tests/`) and ends with the line
 * `N passed, N failed` that CI reads. Extra arguments are passed to `deno test`.
 *
 * @module
 */

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

let passed = 0;
let failed = 0;
try {
  const xml = await Deno.readTextFile(junit);
  // Count top-level tests (testcase elements), failures by their <failure> children.
  for (const m of xml.matchAll(/<testcase\b[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const body = m[2] ?? "";
    if (/<failure\b/.test(body) || /<error\b/.test(body)) failed++;
    else if (!/<skipped\b/.test(body)) passed++;
  }
} catch {
  // no report: the run itself failed before tests started
}
await Deno.remove(junit).catch(() => {});
if (!status.success && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(status.code);
