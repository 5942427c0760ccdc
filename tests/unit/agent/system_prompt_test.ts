import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../../helpers/assert.ts";
import { loadAgentSpec, type ResolvedAgentSpec } from "../../../lib/agent/spec.ts";
import {
  builtinPromptArgs,
  DEFAULT_CAPABILITY_NOTES,
  describeShell,
  formatAdditionalDirsInfo,
  formatLocalIsoTime,
  osDisplayName,
  renderSystemPrompt,
} from "../../../lib/agent/system_prompt.ts";
import { renderPromptTemplate } from "../../../lib/agent/prompt_template.ts";
import { formatSkillsListing } from "../../../lib/agent/skills_listing.ts";

const GOLDEN = new URL("../../golden/default_system_prompt.txt", import.meta.url);
const NOW = new Date("2025-01-02T03:04:05.678Z");

async function withFixture(
  fn: (paths: { work: string; extra: string }) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "system_prompt_test_" }));
  try {
    const work = join(root, "work");
    const extra = join(root, "extra");
    await Deno.mkdir(join(work, ".git"), { recursive: true });
    await Deno.writeTextFile(join(work, ".git", "HEAD"), "ref: refs/heads/main\n");
    await Deno.mkdir(join(work, "src", "lib"), { recursive: true });
    await Deno.writeTextFile(join(work, "src", "main.ts"), "console.log('hi');\n");
    await Deno.mkdir(join(work, "docs"));
    await Deno.writeTextFile(join(work, "README.md"), "# Fixture\n");
    await Deno.writeTextFile(
      join(work, "AGENTS.md"),
      "# Fixture project\n\nRun `deno task test` before finishing.\n",
    );
    await Deno.mkdir(join(extra, "notes"), { recursive: true });
    await Deno.writeTextFile(join(extra, "notes", "todo.md"), "- nothing\n");
    await fn({ work, extra });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

async function renderFixture(
  spec: ResolvedAgentSpec,
  paths: { work: string; extra: string },
  os = "linux",
) {
  const skillsText = formatSkillsListing([
    {
      name: "deploy",
      description: "Ship the fixture to staging.",
      path: join(paths.work, ".kimi", "skills", "deploy", "SKILL.md"),
      scope: "project",
    },
  ]);
  const args = await builtinPromptArgs({
    workDir: paths.work,
    additionalDirs: [paths.extra],
    skillsText,
    now: NOW,
    os,
    shellPath: os === "windows" ? "C:\\Program Files\\Git\\bin\\bash.exe" : "/bin/bash",
  });
  assertEquals(args.KIMI_NOW, formatLocalIsoTime(NOW));
  // Pin the offset so the golden does not depend on the machine's time zone.
  const prompt = renderSystemPrompt(spec, { ...args, KIMI_NOW: formatLocalIsoTime(NOW, 480) });
  return { args, prompt };
}

function normalise(prompt: string, paths: { work: string; extra: string }): string {
  return prompt.replaceAll(paths.extra, "<extra_dir>").replaceAll(paths.work, "<work_dir>");
}

Deno.test("default system prompt golden (fixture work dir, fixed now)", async () => {
  const spec = await loadAgentSpec({ builtin: "default" });
  await withFixture(async (paths) => {
    const { prompt } = await renderFixture(spec, paths);
    const actual = normalise(prompt, paths);
    if (Deno.env.get("UPDATE_GOLDEN") === "1") await Deno.writeTextFile(GOLDEN, actual);
    assertEquals(actual, await Deno.readTextFile(GOLDEN));
  });
});

Deno.test("rendered default prompt stays within 8 KB for the fixture", async () => {
  const spec = await loadAgentSpec({ builtin: "default" });
  await withFixture(async (paths) => {
    const { prompt } = await renderFixture(spec, paths);
    const size = new TextEncoder().encode(prompt).length;
    assert(size <= 8 * 1024, `rendered prompt is ${size} bytes`);
    assert(!prompt.includes("${"), "no unrendered variables");
    assert(!prompt.includes("{%"), "no unrendered tags");
  });
});

Deno.test("builtin args for the fixture", async () => {
  await withFixture(async (paths) => {
    const args = await builtinPromptArgs({
      workDir: paths.work,
      additionalDirs: [],
      skillsText: "",
      now: NOW,
      os: "darwin",
      shellPath: "/bin/zsh",
    });
    assertEquals(args.KIMI_WORK_DIR, paths.work);
    assertEquals(
      args.KIMI_WORK_DIR_LS,
      [
        "├── .git/",
        "│   └── HEAD",
        "├── docs/",
        "├── src/",
        "│   ├── lib/",
        "│   └── main.ts",
        "├── AGENTS.md",
        "└── README.md",
      ].join("\n"),
    );
    assertEquals(
      args.KIMI_AGENTS_MD,
      `<!-- From: ${join(paths.work, "AGENTS.md")} -->\n` +
        "# Fixture project\n\nRun `deno task test` before finishing.",
    );
    assertEquals(args.KIMI_SKILLS, "No skills found.");
    assertEquals(args.KIMI_ADDITIONAL_DIRS_INFO, "");
    assertEquals(args.KIMI_OS, "macOS");
    assertEquals(args.KIMI_SHELL, "zsh (`/bin/zsh`)");
    assertEquals(args.KIMI_CAPABILITY_NOTES, DEFAULT_CAPABILITY_NOTES);
    const custom = await builtinPromptArgs({
      workDir: paths.work,
      additionalDirs: [],
      skillsText: "x",
      capabilityNotes: "Network access is off for this run.",
      os: "linux",
      shellPath: "/bin/bash",
    });
    assertEquals(custom.KIMI_CAPABILITY_NOTES, "Network access is off for this run.");
    assertEquals(custom.KIMI_SKILLS, "x");
  });
});

Deno.test("additional dirs info format", async () => {
  await withFixture(async (paths) => {
    assertEquals(await formatAdditionalDirsInfo([]), "");
    assertEquals(
      await formatAdditionalDirsInfo([paths.extra, join(paths.work, "docs")]),
      `### \`${paths.extra}\`\n\n\`\`\`\n└── notes/\n    └── todo.md\n\`\`\`\n\n` +
        `### \`${join(paths.work, "docs")}\`\n\n\`\`\`\n(empty directory)\n\`\`\``,
    );
  });
});

Deno.test("Windows rendering adds the Git Bash note; Linux does not", async () => {
  const spec = await loadAgentSpec({ builtin: "default" });
  await withFixture(async (paths) => {
    const win = (await renderFixture(spec, paths, "windows")).prompt;
    assertStringIncludes(
      win,
      "The system is Windows. The Shell tool runs bash (`C:\\Program Files\\Git\\bin\\bash.exe`)",
    );
    assertStringIncludes(win, "this shell is Git Bash");
    const linux = (await renderFixture(spec, paths)).prompt;
    assert(!linux.includes("Git Bash"));
  });
});

Deno.test("subagent prompt carries ROLE_ADDITIONAL; spec args override builtins", async () => {
  const root = await loadAgentSpec({ builtin: "default" });
  const coder = await root.subagents.coder.spec();
  await withFixture(async (paths) => {
    const { prompt } = await renderFixture(coder, paths);
    assertStringIncludes(prompt, coder.systemPromptArgs.ROLE_ADDITIONAL.trim());
    const custom = { ...coder, systemPromptArgs: { ...coder.systemPromptArgs, KIMI_OS: "Plan9" } };
    assertStringIncludes((await renderFixture(custom, paths)).prompt, "The system is Plan9.");
  });
});

Deno.test("missing variable → Missing system prompt arg in <path>: <VAR>", async () => {
  await withFixture(async (paths) => {
    const file = join(paths.work, "agent.yaml");
    await Deno.writeTextFile(join(paths.work, "p.md"), "Hello ${KIMI_OS} ${NOT_DEFINED}");
    await Deno.writeTextFile(
      file,
      "version: 1\nagent:\n  name: t\n  system_prompt_path: ./p.md\n  tools: []\n",
    );
    const spec = await loadAgentSpec({ file });
    const args = await builtinPromptArgs({
      workDir: paths.work,
      additionalDirs: [],
      skillsText: "",
      os: "linux",
      shellPath: "/bin/bash",
    });
    assertThrows(() => renderSystemPrompt(spec, args), {
      name: "PromptTemplateError",
      message: `Missing system prompt arg in ${join(paths.work, "p.md")}: NOT_DEFINED`,
    });
    assertThrows(() => renderSystemPrompt(spec, {}), {
      message: `Missing system prompt arg in ${join(paths.work, "p.md")}: KIMI_OS`,
    });
    assertEquals(
      renderSystemPrompt(spec, { ...args, NOT_DEFINED: "x" }),
      "Hello Linux x",
    );
  });
});

Deno.test("KIMI_NOW format: Python isoformat with offset", () => {
  const t = new Date("2025-01-02T03:04:05.678Z");
  assertEquals(formatLocalIsoTime(t, 0), "2025-01-02T03:04:05.678000+00:00");
  assertEquals(formatLocalIsoTime(t, 480), "2025-01-02T11:04:05.678000+08:00");
  assertEquals(formatLocalIsoTime(t, -330), "2025-01-01T21:34:05.678000-05:30");
  assertEquals(
    formatLocalIsoTime(new Date("2025-06-30T23:59:59Z"), 60),
    "2025-07-01T00:59:59+01:00",
  );
});

Deno.test("OS names and shell descriptions", () => {
  assertEquals(osDisplayName("darwin"), "macOS");
  assertEquals(osDisplayName("windows"), "Windows");
  assertEquals(osDisplayName("linux"), "Linux");
  assertEquals(osDisplayName("freebsd"), "FreeBSD");
  assertEquals(describeShell("/bin/bash"), "bash (`/bin/bash`)");
  assertEquals(
    describeShell("C:\\Program Files\\Git\\bin\\bash.exe"),
    "bash (`C:\\Program Files\\Git\\bin\\bash.exe`)",
  );
});

Deno.test("template: conditionals with trim/lstrip blocks", () => {
  const t = "a\n  {% if X %}\nx is ${X}\n{% else %}\nno x\n{% endif %}\nb";
  assertEquals(renderPromptTemplate(t, { X: "1" }, "t"), "a\nx is 1\nb");
  assertEquals(renderPromptTemplate(t, { X: "" }, "t"), "a\nno x\nb");
  const cmp =
    "{% if OS == \"Windows\" %}win{% elif OS != 'Linux' %}other{% else %}linux{% endif %}";
  assertEquals(renderPromptTemplate(cmp, { OS: "Windows" }, "t"), "win");
  assertEquals(renderPromptTemplate(cmp, { OS: "macOS" }, "t"), "other");
  assertEquals(renderPromptTemplate(cmp, { OS: "Linux" }, "t"), "linux");
  assertEquals(renderPromptTemplate("{% if not A %}none{% endif %}.", { A: "" }, "t"), "none.");
  // Nested blocks; a missing variable in a branch not taken is fine.
  const nested = "{% if A %}A{% if B %}B{% endif %}{% else %}${MISSING}{% endif %}";
  assertEquals(renderPromptTemplate(nested, { A: "1", B: "" }, "t"), "A");
  // Literal dollars and braces survive; values are never re-interpreted.
  assertEquals(
    renderPromptTemplate("$100 $PATH {x} ${V}", { V: "{% if Z %}${Y}" }, "t"),
    "$100 $PATH {x} {% if Z %}${Y}",
  );
});

Deno.test("template: malformed tags name the file and the problem", () => {
  const cases: [string, RegExp][] = [
    ["{% if A %}x", /in p\.md: an \{% if %\} block is never closed/],
    ["{% endif %}", /in p\.md: \{% endif %\}: \{% endif %\} without a matching \{% if %\}/],
    ["{% for x in y %}{% endfor %}", /only if \/ elif \/ else \/ endif tags are supported/],
    ["{% if A B %}{% endif %}", /conditions must be NAME/],
    ["{% if A %}{% else %}{% else %}{% endif %}", /after \{% else %\}/],
  ];
  for (const [tpl, re] of cases) {
    assertThrows(() => renderPromptTemplate(tpl, { A: "1" }, "p.md"), re);
  }
});
