/**
 * PTY test (tmux) of `/feedback` (issue 32 item 12) against the mock Kimi Code platform:
 * signed in, it sends the reference's payload with the login's bearer token and the provider's
 * custom headers; a failing platform, an empty or cancelled entry and a missing login each end
 * as the reference's words say, the failures followed by where to report (this build's
 * wording, a diagnostics export) and no token anywhere on the screen or in the export.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { startMockKimiCode } from "../helpers/mock_kimi_code.ts";
import { TmuxKimi } from "../helpers/tmux.ts";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** Whether the prompt is idle: an empty `✨` input line above the status line. */
function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

/** How many times `part` occurs in `text`. */
const count = (text: string, part: string) => text.split(part).length - 1;

Deno.test(
  "shell (issue 32 item 12): /feedback submits to Kimi Code when signed in, else says where to report",
  opts,
  async () => {
    const sb = await kimiSandbox();
    const kc = await startMockKimiCode();
    try {
      const env = { KIMI_CODE_OAUTH_HOST: kc.oauthHost, KIMI_CODE_BASE_URL: kc.baseUrl };
      const login = await sb.run(["login", "--json"], { env });
      assertEquals(login.code, 0, login.stdout + login.stderr);
      // the provider's custom headers travel with the feedback, as the reference sends them
      const configPath = `${sb.shareDir}/config.toml`;
      const config = parseToml(await Deno.readTextFile(configPath)) as any;
      config.providers["managed:kimi-code"].custom_headers = { "X-Team": "deno-e2e" };
      await Deno.writeTextFile(configPath, stringifyToml(config));
      const credentialsPath = `${sb.shareDir}/credentials/kimi-code.json`;
      const { access_token: access } = JSON.parse(await Deno.readTextFile(credentialsPath));
      const feedbackRequests = () => kc.requests.filter((r) => r.path === "/coding/v1/feedback");

      const t = await TmuxKimi.start(sb, [], { env, height: 60 });
      try {
        await t.waitFor(promptReady);
        const [sessionDir] = await sb.sessionDirs();
        const sessionId = sessionDir.split("/").at(-1)!;

        // signed in: asked for a line, sent with the bearer token, thanked with the session id
        await t.type("/feedback");
        await t.keys("Enter");
        await t.waitFor("Enter your feedback:");
        await t.type("the diff view is great");
        await t.keys("Enter");
        let s = await t.waitFor((x) =>
          x.includes("Feedback submitted, thank you!") && promptReady(x)
        );
        assertStringIncludes(s, `Feedback submitted, thank you! Your session ID is: ${sessionId}`);
        assert(!s.includes("Send feedback"), "no fallback after a success:\n" + s);
        assertEquals(feedbackRequests().length, 1);
        const [sent] = feedbackRequests();
        assertEquals(sent.headers.authorization, `Bearer ${access}`);
        assertEquals(sent.headers["x-team"], "deno-e2e");
        assertStringIncludes(sent.headers["content-type"], "application/json");
        assertEquals(sent.body, {
          session_id: sessionId,
          content: "the diff view is great",
          version: "1.49.0",
          os: `Linux ${Deno.osRelease()}`,
          model: "kimi-code/kimi-for-coding",
        });

        // empty and cancelled entries send nothing
        await t.type("/feedback");
        await t.keys("Enter");
        await t.waitFor("Enter your feedback:");
        await t.type("   ");
        await t.keys("Enter");
        await t.waitFor((x) => x.includes("Feedback cannot be empty.") && promptReady(x));
        await t.type("/feedback");
        await t.keys("Enter");
        await t.waitFor("Enter your feedback:");
        await t.keys("C-c");
        await t.waitFor((x) => x.includes("Feedback cancelled.") && promptReady(x));
        assertEquals(feedbackRequests().length, 1);

        // the platform fails: the reference's words, then where to report
        kc.feedbackStatus = 500;
        await t.type("/feedback");
        await t.keys("Enter");
        await t.waitFor("Enter your feedback:");
        await t.type("second thoughts");
        await t.keys("Enter");
        s = await t.waitFor((x) => x.includes("Diagnostics saved to") && promptReady(x));
        assertStringIncludes(s, "Failed to submit feedback (HTTP 500).");
        assertStringIncludes(s, "Report problems with this build (kimi for Deno");
        assertEquals(feedbackRequests().length, 2);
        assertEquals(feedbackRequests()[1].body.content, "second thoughts");

        // the login is gone: no question, no request, where to report
        await Deno.remove(credentialsPath);
        await t.type("/feedback");
        await t.keys("Enter");
        await t.waitFor((x) => x.includes("You are not signed in to Kimi Code") && promptReady(x));
        const history = await t.history();
        assertStringIncludes(
          history.split("You are not signed in to Kimi Code")[1],
          "Diagnostics saved to",
        );
        assertEquals(count(history, "Diagnostics saved to"), 2);
        // the two entries sent are echoed; no question was asked without a login
        assertEquals(count(history, "Enter your feedback: "), 2);
        assertEquals(feedbackRequests().length, 2);

        assert(!history.includes(access), "the access token never reaches the screen");
        assert(!history.includes("MoonshotAI/kimi-cli"), history);
        const feedbackDir = `${sb.shareDir}/feedback`;
        for await (const e of Deno.readDir(feedbackDir)) {
          const text = await Deno.readTextFile(`${feedbackDir}/${e.name}`);
          assert(!text.includes(access), `token in the export ${e.name}`);
          assert(!text.includes("refresh-1-secret"), `refresh token in the export ${e.name}`);
        }
      } finally {
        await t.close();
      }
    } finally {
      await kc.close();
      await sb.cleanup();
    }
  },
);
