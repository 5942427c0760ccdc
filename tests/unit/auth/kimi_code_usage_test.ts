import { assertEquals } from "../../helpers/assert.ts";
import {
  formatDuration,
  formatQuota,
  parseQuota,
  quotaFetchError,
} from "../../../lib/auth/kimi_code_usage.ts";

const NOW = Date.parse("2026-11-25T00:00:00Z");

Deno.test("quota: summary and windows, used or remaining, labels and reset hints", () => {
  const rows = parseQuota({
    usage: { limit: "1000", remaining: 250, resetAt: "2026-11-25T03:05:00.123456789Z" },
    limits: [
      { window: { duration: 300, timeUnit: "TIME_UNIT_MINUTE" }, detail: { limit: 100, used: 10 } },
      {
        window: { duration: 45, timeUnit: "TIME_UNIT_MINUTE" },
        detail: { limit: 10, used: 10, reset_in: 60 },
      },
      { name: "Daily", limit: 5, used: 1, reset_at: "2026-11-24T00:00:00Z" },
      { detail: { limit: 3 }, window: {} },
      "junk",
      { detail: {} },
    ],
  }, NOW);
  assertEquals(rows, [
    { label: "Weekly limit", used: 750, limit: 1000, resetHint: "resets in 3h 5m" },
    { label: "5h limit", used: 10, limit: 100, resetHint: null },
    { label: "45m limit", used: 10, limit: 10, resetHint: "resets in 1m" },
    { label: "Daily", used: 1, limit: 5, resetHint: "reset" },
    { label: "Limit #4", used: 0, limit: 3, resetHint: null },
  ]);
  assertEquals(formatQuota(rows.slice(0, 2)), [
    "Weekly limit  ███████████████░░░░░  25% left (resets in 3h 5m)",
    "5h limit      ██░░░░░░░░░░░░░░░░░░  90% left",
  ]);
  assertEquals(parseQuota(null), []);
  assertEquals(parseQuota({ usage: { foo: 1 } }), []);
});

Deno.test("quota: durations and fetch errors", () => {
  assertEquals(formatDuration(0), "0s");
  assertEquals(formatDuration(3725), "1h 2m 5s");
  assertEquals(formatDuration(3 * 86400 + 7200), "3d 2h");
  assertEquals(
    quotaFetchError(401),
    "Authorization failed. Please check your API key or run /login.",
  );
  assertEquals(quotaFetchError(404), "Usage endpoint not available. Try Kimi For Coding.");
  assertEquals(quotaFetchError(500), "Failed to fetch usage.");
  assertEquals(quotaFetchError(null, "timed out"), "Failed to fetch usage: timed out");
});
