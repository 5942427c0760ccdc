/**
 * The real `@modelcontextprotocol/server-filesystem` from npm over stdio, end to end through
 * `main.ts --print` with a scripted model: the sandbox work dir is its allowed directory; the
 * tool outputs land in context.jsonl as the model will see them (reference §6.2).
 */
import { assertEquals } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { MCP_SERVER_FILESYSTEM } from "../helpers/npm_servers.ts";

const FILESYSTEM = MCP_SERVER_FILESYSTEM;

type Line = Record<string, unknown>;

async function contextLines(sb: KimiSandbox): Promise<Line[]> {
  const [dir] = await sb.sessionDirs();
  const text = await Deno.readTextFile(`${dir}/context.jsonl`);
  return text.trim().split("\n").map((l) => JSON.parse(l) as Line);
}

Deno.test("filesystem server from npm: allowed directories, reading a file, a denied path", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.writeTextFile(`${sb.workDir}/notes.txt`, "line one\nline two\n");
    const outside = `${sb.root}/secret.txt`;
    await Deno.writeTextFile(outside, "not for the model\n");
    const config = await sb.scriptedConfig([
      [
        toolCallLine("f1", "list_allowed_directories", {}),
        toolCallLine("f2", "read_text_file", { path: `${sb.workDir}/notes.txt` }),
        toolCallLine("f3", "read_text_file", { path: outside }),
      ].join("\n"),
      "text: done",
    ]);
    const fs = {
      command: Deno.execPath(),
      args: ["run", "-A", "--no-config", "--no-lock", FILESYSTEM, sb.workDir],
    };
    const out = await sb.run([
      "--print",
      "--yolo",
      "--config-file",
      config,
      "--mcp-config",
      JSON.stringify({ mcpServers: { fs } }),
      "-p",
      "go",
    ]);
    assertEquals(out.code, 0, out.stderr);

    const lines = await contextLines(sb);
    const tools = lines.filter((l) => l.role === "tool");
    assertEquals(tools, [
      {
        role: "tool",
        content: `Allowed directories:\n${sb.workDir}`,
        tool_call_id: "f1",
      },
      { role: "tool", content: "line one\nline two\n", tool_call_id: "f2" },
      {
        role: "tool",
        content: [
          {
            type: "text",
            text: "<system>ERROR: Tool returned an error. The output may be error message or " +
              "incomplete output</system>",
          },
          {
            type: "text",
            text:
              `Access denied - path outside allowed directories: ${outside} not in ${sb.workDir}`,
          },
        ],
        tool_call_id: "f3",
      },
    ]);
    assertEquals(lines.at(-1), { role: "assistant", content: "done" });
  } finally {
    await sb.cleanup();
  }
});
