import { assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { DEFAULT_CAPABILITY_NOTES } from "../../../lib/agent/system_prompt.ts";
import { missingPermissionMessage } from "../../../lib/cli/entry.ts";
import {
  capabilityNotes,
  computeRunScope,
  describeRunScope,
  type PermissionQuery,
  type RunScopeSummary,
  unavailableTools,
  urlHost,
} from "../../../lib/sandbox/run_scope.ts";
import {
  grantingFlags,
  missingStartupPermissions,
  runsAgent,
  startupPermissionMessage,
} from "../../../lib/sandbox/startup_permissions.ts";
import type { AccessKind, PermissionScope } from "../../../lib/tooling/scope.ts";
import { denialMessage } from "../../../lib/tooling/scope.ts";
import { profileFlags, scanKimiArgs } from "../../../scripts/launch.ts";

type Grants = Partial<Record<AccessKind, true | string[]>>;

function target(d: Deno.PermissionDescriptor): string | undefined {
  switch (d.name) {
    case "read":
    case "write":
      return d.path?.toString();
    case "net":
      return d.host;
    case "run":
      return d.command?.toString();
    case "env":
      return d.variable;
    default:
      return undefined;
  }
}

/** A fake Deno: `true` grants the whole kind; a list grants those targets (and below paths). */
function fakeQuery(grants: Grants, prompt = false): PermissionQuery {
  return (d) => {
    const g = grants[d.name as AccessKind];
    const t = target(d);
    if (g === true) return "granted";
    if (g && t !== undefined && g.some((x) => t === x || t.startsWith(x + "/"))) return "granted";
    return prompt ? "prompt" : "denied";
  };
}

function fakeScope(query: PermissionQuery): PermissionScope {
  return {
    check(kind, t) {
      const d = kind === "read" || kind === "write"
        ? { name: kind, path: t }
        : kind === "net"
        ? { name: kind, host: t }
        : kind === "run"
        ? { name: kind, command: t }
        : { name: kind, variable: t };
      return query(d as Deno.PermissionDescriptor) === "granted"
        ? { allowed: true }
        : { allowed: false, message: denialMessage(kind, t) };
    },
  };
}

const BASE = {
  workDir: "/w",
  shareDir: "/h/.kimi",
  additionalDirs: ["/extra"],
  modelHost: "api.example.com",
};

Deno.test("computeRunScope: -A is `all` for every kind, and nothing is lacking", () => {
  const all: Grants = { read: true, write: true, net: true, run: true, env: true };
  const s = computeRunScope({ ...BASE, query: fakeQuery(all) });
  for (const k of ["read", "write", "net", "run", "env"] as const) {
    assertEquals(s[k], { level: "all", granted: [], denied: [] });
  }
  assertEquals(capabilityNotes(s), DEFAULT_CAPABILITY_NOTES);
  assertEquals(unavailableTools(s, fakeScope(fakeQuery(all)), { workDir: "/w" }), []);
});

Deno.test("computeRunScope: the review profile is partial write, partial net, partial run", () => {
  const grants: Grants = {
    read: true,
    env: true,
    write: ["/h/.kimi"],
    net: ["api.example.com"],
    run: ["/opt/rg"],
  };
  const q = fakeQuery(grants);
  const s = computeRunScope({ ...BASE, programs: ["/opt/rg"], query: q });
  assertEquals(s.read.level, "all");
  assertEquals(s.write, {
    level: "partial",
    granted: ["/h/.kimi"],
    denied: ["/w", "/extra", "/tmp"],
  });
  assertEquals(s.net, { level: "partial", granted: ["api.example.com"], denied: [] });
  assertEquals(s.run, { level: "partial", granted: ["/opt/rg"], denied: ["bash", "git"] });
  assertEquals(
    unavailableTools(s, fakeScope(q), { workDir: "/w" }).map((t) => t.name),
    ["Shell", "WriteFile", "StrReplaceFile"],
  );
  assertEquals(
    unavailableTools(s, fakeScope(q), { workDir: "/w", searchHost: "search.example.com" })
      .map((t) => t.name),
    ["Shell", "SearchWeb", "WriteFile", "StrReplaceFile"],
  );
  const notes = capabilityNotes(s);
  assertEquals(
    notes,
    "This run is confined by Deno permissions. It may not:\n" +
      "- write files outside `/h/.kimi`\n" +
      "- connect to hosts other than `api.example.com`\n" +
      "- run programs other than `/opt/rg`\n\n" +
      "Tools that cannot work at all are not offered. An operation outside these limits fails " +
      "with an error naming the flag that would allow it: do not retry it or look for a way " +
      "around it; tell the user which flag is needed if the task requires it. What is allowed " +
      "takes effect on the user's real system immediately, so be careful.",
  );
  assertEquals(describeRunScope(s), [
    "read: all",
    "write: partial; allowed: /h/.kimi; denied: /w, /extra, /tmp",
    "net: partial; allowed: api.example.com",
    "run: partial; allowed: /opt/rg; denied: bash, git",
    "env: all",
  ]);
});

Deno.test("computeRunScope: `prompt` counts as not granted; no net leaves out the web tools", () => {
  const q = fakeQuery({ read: true, env: true, write: ["/w"] }, true);
  const s = computeRunScope({ ...BASE, query: q });
  assertEquals(s.net, { level: "none", granted: [], denied: ["api.example.com"] });
  assertEquals(s.run.level, "none");
  const out = unavailableTools(s, fakeScope(q), { workDir: "/w" });
  assertEquals(out, [
    { name: "Shell", reason: "this run may not run `bash` (needs --allow-run)" },
    { name: "FetchURL", reason: "this run has no network access (needs --allow-net)" },
    { name: "SearchWeb", reason: "this run has no network access (needs --allow-net)" },
  ]);
  const notes = capabilityNotes(s);
  assertStringIncludes(notes, "- use the network (no web search or fetching)\n");
  assertStringIncludes(notes, "- run programs (no shell commands)");
  assertStringIncludes(notes, "- write files outside `/w`\n");
});

Deno.test("computeRunScope: with the real Deno permissions of this -A test run", () => {
  const s = computeRunScope({ workDir: Deno.cwd(), shareDir: null, additionalDirs: [] });
  assertEquals(s.write.level, "all");
  assertEquals(capabilityNotes(s), DEFAULT_CAPABILITY_NOTES);
});

Deno.test("urlHost keeps the port and rejects non-URLs", () => {
  assertEquals(urlHost("https://api.moonshot.ai/v1"), "api.moonshot.ai");
  assertEquals(urlHost("http://127.0.0.1:8080/v1"), "127.0.0.1:8080");
  assertEquals(urlHost(""), null);
  assertEquals(urlHost("not a url"), null);
});

Deno.test("startup check: nothing granted names the program, HOME and the share dir", () => {
  const missing = missingStartupPermissions({
    programDir: "/app/",
    needsShareDir: true,
    query: fakeQuery({}, true),
    getEnv: () => "/home/u",
  });
  assertEquals(missing.map((m) => `${m.kind} ${m.target}`), [
    "read /app",
    "env HOME",
    "read $HOME/.kimi",
    "write $HOME/.kimi",
  ]);
  assertEquals(grantingFlags(missing), [
    "--allow-read=/app,$HOME/.kimi",
    "--allow-env=HOME",
    "--allow-write=$HOME/.kimi",
  ]);
  assertStringIncludes(startupPermissionMessage(missing), "kimi cannot start:");
});

Deno.test("startup check: KIMI_SHARE_DIR wins over HOME; all granted means nothing missing", () => {
  const env: Record<string, string> = { HOME: "/home/u", KIMI_SHARE_DIR: "/data/kimi" };
  const q = fakeQuery({ read: true, env: true, write: ["/data/kimi"] });
  assertEquals(
    missingStartupPermissions({
      programDir: "/app",
      needsShareDir: true,
      query: q,
      getEnv: (n) => env[n],
    }),
    [],
  );
  const narrow = fakeQuery({ read: ["/app"], env: true, write: ["/home/u/.kimi"] });
  assertEquals(
    missingStartupPermissions({
      programDir: "/app",
      needsShareDir: true,
      query: narrow,
      getEnv: (n) => env[n],
    }),
    [
      { kind: "read", target: "/data/kimi", why: "the share dir" },
      { kind: "write", target: "/data/kimi", why: "the share dir" },
    ],
  );
  // `kimi info` and help do not need the share dir.
  assertEquals(
    missingStartupPermissions({ programDir: "/app", needsShareDir: false, query: narrow }),
    [],
  );
  assertEquals(runsAgent(["info"]), false);
  assertEquals(runsAgent(["--help"]), false);
  assertEquals(runsAgent(["--print", "-p", "hi"]), true);
});

Deno.test("missingPermissionMessage turns Deno's NotCapable into the flag to add", () => {
  const err = new Deno.errors.NotCapable(
    'Requires net access to "api.example.com:443", run again with the --allow-net flag',
  );
  assertEquals(
    missingPermissionMessage(err),
    "kimi cannot continue: Deno did not grant this run a permission it needs: net " +
      "`api.example.com:443` (needs --allow-net=api.example.com:443). kimi never shows Deno's " +
      "permission prompt: run it again with that flag, or use a permission profile: " +
      "`deno task review`, `deno task workspace` or `deno task full` " +
      '(see "Permission profiles" in README.md).',
  );
});

Deno.test("profileFlags: review, workspace and full", () => {
  const ctx = {
    shareDir: "/h/.kimi",
    workDir: "/w",
    addDirs: ["/x"],
    modelHost: "api.example.com",
    rgPath: "/opt/rg",
    plansDir: "/h/.kimi/plans",
  };
  assertEquals(profileFlags("review", ctx), [
    "--allow-read",
    "--allow-env",
    "--allow-write=/h/.kimi",
    "--allow-net=api.example.com",
    "--allow-run=/opt/rg",
  ]);
  // a model behind a login also reaches its OAuth host (token refresh)
  assertEquals(
    profileFlags("review", { ...ctx, authHost: "auth.kimi.com" })[3],
    "--allow-net=api.example.com,auth.kimi.com",
  );
  assertEquals(profileFlags("review", { ...ctx, modelHost: null, rgPath: null }), [
    "--allow-read",
    "--allow-env",
    "--allow-write=/h/.kimi",
  ]);
  assertEquals(profileFlags("workspace", ctx), [
    "--allow-read",
    "--allow-env",
    "--allow-write=/w,/x,/h/.kimi,/h/.kimi/plans,/tmp",
    "--allow-run",
    "--allow-net",
  ]);
  assertEquals(profileFlags("full", ctx), ["-A"]);
});

Deno.test("scanKimiArgs picks the work dir, add dirs, config file and model", () => {
  assertEquals(
    scanKimiArgs([
      "-w",
      "/w",
      "--add-dir=/a",
      "--add-dir",
      "/b",
      "--config-file",
      "c.toml",
      "-m",
      "k2",
      "--",
      "-w",
      "/ignored",
    ]),
    { workDir: "/w", addDirs: ["/a", "/b"], configFile: "c.toml", model: "k2" },
  );
  assertEquals(scanKimiArgs(["--print", "-p", "hi"]), { addDirs: [] });
});

Deno.test("capabilityNotes: nothing granted at all", () => {
  const none: RunScopeSummary = {
    read: { level: "none", granted: [], denied: [] },
    write: { level: "none", granted: [], denied: [] },
    net: { level: "none", granted: [], denied: [] },
    run: { level: "none", granted: [], denied: [] },
    env: { level: "none", granted: [], denied: [] },
  };
  assertStringIncludes(
    capabilityNotes(none),
    "It may not:\n- read files\n- write or edit any file\n- use the network (no web search or " +
      "fetching)\n- run programs (no shell commands)\n- read most environment variables\n\n",
  );
});

Deno.test("launcher: `kimi web` under review may listen on its bind address only", () => {
  assertEquals(scanKimiArgs(["--yolo", "web", "--no-open"]).webHost, "127.0.0.1");
  assertEquals(scanKimiArgs(["web", "-n"]).webHost, "0.0.0.0");
  assertEquals(scanKimiArgs(["web", "-n", "--host", "10.0.0.5"]).webHost, "10.0.0.5");
  assertEquals(scanKimiArgs(["web", "-h", "::1"]).webHost, "[::1]");
  assertEquals(scanKimiArgs(["-w", "web"]).webHost, undefined); // `web` is the work dir here
  assertEquals(scanKimiArgs(["--config-file", "c.toml"]).webHost, undefined);
  const flags = profileFlags("review", {
    shareDir: "/h/.kimi",
    workDir: "/w",
    addDirs: [],
    modelHost: "api.example.com",
    rgPath: null,
    listenHost: "127.0.0.1",
  });
  assertEquals(flags.at(-1), "--allow-net=api.example.com,127.0.0.1");
});
