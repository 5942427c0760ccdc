import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox, sandboxEnv } from "../helpers/kimi_process.ts";
import { probeModules } from "../../scripts/bench/module_probe.ts";

const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
const SDK = "@agentclientprotocol/sdk@2.4.0";

Deno.test("acp: only `kimi acp` loads the ACP server and SDK (observed through V8)", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: hi"]);
    const probe = (args: string[]) =>
      probeModules({
        scriptArgs: [`${REPO}/main.ts`, "--config-file", config, ...args],
        denoFlags: ["--no-prompt", "-A"],
        cwd: sb.workDir,
        env: sandboxEnv(sb, { NO_COLOR: "1" }),
        repoRoot: REPO,
      });
    const print = await probe(["--print", "-p", "hi"]);
    assertEquals(print.code, 0, print.stdout);
    assert(print.localModules.includes("lib/ui/print/print_ui.ts"), "probe saw nothing");
    assertEquals(print.localModules.filter((m) => m.includes("acp")), []);
    assert(!print.npmPackages.includes(SDK), print.npmPackages.join());

    const acp = await probe(["acp"]); // stdin closed: serves nothing and exits 0
    assertEquals(acp.code, 0, acp.stdout);
    assert(acp.localModules.includes("lib/ui/acp/server.ts"), acp.localModules.join());
    assert(acp.npmPackages.includes(SDK), acp.npmPackages.join());
  } finally {
    await sb.cleanup();
  }
});
