import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox, MAIN_TS, sandboxEnv, toolCallLine } from "../helpers/kimi_process.ts";

/** Every line but a possibly torn last one parses as JSON. */
function checkJsonl(text: string, what: string): string[] {
  const lines = text.split("\n");
  const last = lines.pop()!;
  for (const [i, l] of lines.entries()) {
    if (!l) continue;
    try {
      JSON.parse(l);
    } catch {
      // A torn line may only be followed by records that parse.
      assert(
        i === lines.length - 1 || lines.slice(i + 1).every((x) => !x || tryParse(x)),
        `${what} line ${i}`,
      );
    }
  }
  return last ? [...lines, last] : lines;
}
function tryParse(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

Deno.test("kill -9 at 50 random moments: every session stays resumable with its records intact", async () => {
  const sb = await kimiSandbox({ sessionFiles: { allowTorn: true } });
  try {
    const longText = Array.from({ length: 400 }, (_, i) => `text: chunk ${i} `).join("\n");
    const steps: string[] = [];
    for (let i = 0; i < 6; i++) {
      steps.push(
        `${longText}\n${
          toolCallLine(`s${i}`, "Shell", { command: `sleep 0.0${i}; echo step${i}` })
        }`,
      );
      steps.push(
        toolCallLine(`w${i}`, "WriteFile", { path: `f${i}.txt`, content: "x".repeat(5000) }),
      );
    }
    steps.push("text: finished");
    const config = await sb.scriptedConfig(steps);
    const resume = await sb.scriptedConfig(Array.from({ length: 60 }, () => "text: resumed ok"));
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let k = 0; k < 50; k++) {
      const id = `crash-${k}`;
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-prompt",
          "-A",
          MAIN_TS,
          "--print",
          "--yolo",
          "--session",
          id,
          "--config-file",
          config,
          "-p",
          "go",
        ],
        cwd: sb.workDir,
        clearEnv: true,
        env: sandboxEnv(sb, { PATH: Deno.env.get("PATH")! }),
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      await new Promise((res) => setTimeout(res, 120 + rand() * 700));
      try {
        child.kill("SIGKILL");
      } catch {
        // already finished
      }
      await child.status;
      const dirs = (await sb.sessionDirs()).filter((d) => d.endsWith(`/${id}`));
      if (dirs.length === 0) continue; // killed before the session was created
      const dir = dirs[0];
      const ctxBefore = await Deno.readTextFile(`${dir}/context.jsonl`).catch(() => "");
      const wireBefore = await Deno.readTextFile(`${dir}/wire.jsonl`).catch(() => "");
      checkJsonl(ctxBefore, "context");
      checkJsonl(wireBefore, "wire");
      const r = await sb.run(["--print", "--session", id, "--config-file", resume, "-p", "again"]);
      assertEquals(r.code, 0, `resume ${id}: ${r.stdout}${r.stderr}`);
      const ctxAfter = await Deno.readTextFile(`${dir}/context.jsonl`);
      // Everything written before the kill is still there, byte for byte.
      assert(ctxAfter.startsWith(ctxBefore), `context of ${id} changed`);
      const after = ctxAfter.trim().split("\n").filter(tryParse).map((l) => JSON.parse(l));
      const before = ctxBefore.split("\n").filter(tryParse).length;
      // The resumed turn added its four records (a torn tail must not swallow the first one).
      assertEquals(after.length - before >= 4, true, `records of ${id}`);
      assertEquals(after[after.length - 1], { role: "assistant", content: "resumed ok" });
      assert((await Deno.readTextFile(`${dir}/wire.jsonl`)).startsWith(wireBefore));
      JSON.parse(await Deno.readTextFile(`${dir}/state.json`));
    }
  } finally {
    await sb.cleanup();
  }
});
